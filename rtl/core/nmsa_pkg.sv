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

endpackage

`default_nettype wire
