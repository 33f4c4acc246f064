// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Project-wide constants. Configuration (array size, N:M, widths) is passed as module
// parameters from rtl/configs.json; this package holds only what every configuration shares.
`default_nettype none

package nmsa_pkg;

  // Defaults of the product configuration: 2:4 sparsity, INT8 operands, INT32 accumulation.
  parameter int unsigned DefaultN     = 2;
  parameter int unsigned DefaultM     = 4;
  parameter int unsigned DefaultDataW = 8;
  parameter int unsigned DefaultAccW  = 32;

  // Number of weight banks per PE: one computing, one loading (double buffering).
  parameter int unsigned NumWeightBanks = 2;

  // Pipeline stages of a PE from a beat's arrival to its partial sum leaving (arrival, select,
  // multiply, sum of products, accumulate; docs/architecture.md). The array's latency is
  // Rows + Cols + PeLatency - 2.
  parameter int unsigned PeLatency = 5;

  // Cycles from a beat's issue to the accumulator write of its result row, counted so that a
  // beat issued this many cycles after another reads the row that one wrote (nmsa_compute's
  // read, register, add, write). A beat that accumulates into a row issued more recently waits.
  parameter int unsigned AccHazardCycles = 4;

  // ---------------------------------------------------------------------------------------------
  // Command stream (docs/isa.md). Commands are 32 bytes: four little-endian 64-bit words.
  // ---------------------------------------------------------------------------------------------
  parameter int unsigned CmdBytes = 32;

  parameter logic [3:0] OpLoad    = 4'd1;
  parameter logic [3:0] OpCompute = 4'd2;
  parameter logic [3:0] OpStore   = 4'd3;

  parameter logic [3:0] TargetAct = 4'd0;
  parameter logic [3:0] TargetWgt = 4'd1;
  parameter logic [3:0] TargetEpi = 4'd2;

  // A fetched command, decoded into fields shared by all engines. The meaning of each field
  // depends on the opcode (docs/isa.md, "Encoding").
  typedef struct packed {
    logic [31:0] index;      // position in the stream, reported on errors
    logic [3:0]  opcode;
    logic        pop_prev;
    logic        pop_next;
    logic        push_prev;
    logic        push_next;
    logic [3:0]  target;     // LOAD: buffer
    logic        flag_a;     // COMPUTE: DENSE, STORE: RELU
    logic        flag_b;     // COMPUTE: ACCUMULATE, STORE: INT32
    logic [1:0]  part;       // COMPUTE: dense part
    logic [15:0] addr;       // LOAD: entry, COMPUTE: weight record, STORE: accumulator row
    logic [15:0] count;      // LOAD/STORE: rows, COMPUTE: beats
    logic [15:0] size;       // LOAD: bytes per row, STORE: epilogue entry
    logic [63:0] word1;      // LOAD/STORE: host address; COMPUTE: act addr, act stride, acc row
    logic [63:0] word2;      // LOAD/STORE: host stride
  } cmd_t;

  // $bits(cmd_t), spelled out because Debian's Yosys 0.23 cannot take $bits of a type.
  parameter int unsigned CmdTW = 224;

  // Defaults of the queue and FIFO depths, which each configuration sets (rtl/configs.json:
  // queue_depth, fetch_chunk_cmds, fetch_chunks, pending_loads, read_requests).
  // Command fetch: commands per DMA request, and requests' worth of beats the fetch FIFO holds.
  parameter int unsigned FetchChunkCmds = 8;
  parameter int unsigned FetchChunks    = 2;
  // Commands each engine's queue holds.
  parameter int unsigned CmdQueueDepth  = 8;
  // LOADs requested from the DMA and waiting for their data (nmsa_load).
  parameter int unsigned PendingLoads   = 4;
  // Read requests with data outstanding: the read DMA's owner FIFO (nmsa_top).
  parameter int unsigned ReadRequests   = 8;
  // Width of the dependency-token counters (docs/isa.md); a push beyond the maximum is BAD_DEPS.
  parameter int unsigned TokenW         = 8;
  // Consecutive cycles with commands waiting and nothing in flight before the deadlock detector
  // reports BAD_DEPS (a command handed between queues is never quiet for that long).
  parameter int unsigned DeadlockCycles = 4;

  // ---------------------------------------------------------------------------------------------
  // Epilogue parameters (docs/isa.md, LOAD target 2): one record per output channel.
  // ---------------------------------------------------------------------------------------------
  parameter int unsigned EpiParamBits = 96;  // 12 bytes
  parameter int unsigned EpiBiasLsb   = 0;   // int32 bias
  parameter int unsigned EpiMultLsb   = 32;  // int32 multiplier
  parameter int unsigned EpiShiftLsb  = 64;  // shift, the low 6 bits of an int32

  // Cycles from a group of channels entering nmsa_epilogue to its results.
  parameter int unsigned EpiLatency = 7;

endpackage

`default_nettype wire
