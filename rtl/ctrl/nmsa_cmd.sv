// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Command processor: fetches the command stream from host memory by DMA (in chunks, several in
// flight), checks every command against docs/isa.md and the buffer sizes, and dispatches it in
// order to the queue of its engine. It also keeps the balance of dependency tokens over the whole
// stream: a stream that pops more than it pushes could never finish and is refused (BAD_DEPS).
//
// A command goes through a pipeline of registers, one step each (docs/architecture.md):
//   assemble  its AXI beats, one per cycle, each into its place in a 256-bit register;
//   decode    the fields, and the products and room that the range checks need;
//   check     the error code, or none;
//   dispatch  into its engine's queue, or stop the stream with the error.
// The next command assembles while earlier ones are decoded and checked.
`default_nettype none

module nmsa_cmd #(
  parameter int unsigned AxiDataW      = 64,
  parameter int unsigned Rows          = 8,
  parameter int unsigned Cols          = 8,
  parameter int unsigned N             = 2,
  parameter int unsigned M             = 4,
  parameter bit          Sparse        = 1'b1,
  parameter int unsigned ActEntries    = 2048,
  parameter int unsigned ActEntryBytes = 32,
  parameter int unsigned WgtRecords    = 256,
  parameter int unsigned RecordBytes   = 24,
  parameter int unsigned EpiEntries    = 64,
  parameter int unsigned AccEntries    = 2048,
  // Commands per fetch request, and requests' worth of beats the fetch FIFO holds.
  parameter int unsigned FetchChunkCmds = nmsa_pkg::FetchChunkCmds,
  parameter int unsigned FetchChunks    = nmsa_pkg::FetchChunks,
  parameter bit          BlockRamFifos  = 1'b0   // the fetch FIFO in block RAM (nmsa_fifo)
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  clear_i,
  input  logic                  abort_i,

  input  logic                  start_i,
  input  logic [63:0]           base_i,
  input  logic [31:0]           count_i,

  // DMA read request and data (command fetch).
  output logic                  req_valid_o,
  input  logic                  req_ready_i,
  output logic [63:0]           req_addr_o,
  output logic [15:0]           req_row_bytes_o,
  output logic [15:0]           req_rows_o,
  output logic [63:0]           req_stride_o,
  input  logic                  rd_valid_i,
  output logic                  rd_ready_o,
  input  logic [AxiDataW-1:0]   rd_data_i,
  input  logic [1:0]            rd_resp_i,
  input  logic                  rd_last_i,

  // Dispatch, in stream order.
  output nmsa_pkg::cmd_t        cmd_o,
  output logic                  load_valid_o,
  input  logic                  load_ready_i,
  output logic                  compute_valid_o,
  input  logic                  compute_ready_i,
  output logic                  store_valid_o,
  input  logic                  store_ready_i,

  output logic                  err_valid_o,
  output logic [3:0]            err_code_o,
  output logic [31:0]           err_index_o,
  output logic                  busy_o,        // commands left to fetch or dispatch
  output logic                  quiet_o        // nothing in flight, and nothing can move now
);

  localparam int unsigned CmdBits   = 256;
  localparam int unsigned CmdBeats  = CmdBits / AxiDataW;
  localparam int unsigned FifoDepth = FetchChunks * FetchChunkCmds * CmdBeats;
  localparam int unsigned CntW      = $clog2(FifoDepth) + 1;
  localparam int unsigned BeatB     = AxiDataW / 8;
  localparam int unsigned BeatOff   = $clog2(BeatB);
  localparam int unsigned EpiBytes  = Cols * nmsa_pkg::EpiParamBits / 8;
  localparam int unsigned ChunkW    = $clog2(FetchChunkCmds) + 1;

  if (FetchChunkCmds < 2 || (FetchChunkCmds & (FetchChunkCmds - 1)) != 0) begin : g_bad_chunk
    $error("nmsa_cmd: FetchChunkCmds must be a power of two >= 2");
  end
  if (CmdBits % AxiDataW != 0) begin : g_bad_width
    $error("nmsa_cmd: AxiDataW must divide 256");
  end
  // The range-check products (see Decode) must be ready when a command is complete: the beat
  // holding the last operand (the activation stride, bits 95:80) has to arrive at least two
  // beats before the command's last one.
  if (CmdBeats - (95 / AxiDataW) < 3) begin : g_bad_product_timing
    $error("nmsa_cmd: the decode products need AxiDataW <= 64 (four beats per command)");
  end
  // Output rows are Cols or 4*Cols bytes; their alignment checks are masks.
  if ((Cols & (Cols - 1)) != 0) begin : g_bad_cols
    $error("nmsa_cmd: Cols must be a power of two");
  end

  // ---------------------------------------------------------------------------------------------
  // Fetch
  // ---------------------------------------------------------------------------------------------
  logic [63:0]     fetch_addr_d, fetch_addr_q;
  logic [31:0]     to_fetch_d, to_fetch_q;       // commands not yet requested
  logic [31:0]     to_decode_d, to_decode_q;     // commands not yet dispatched, a cycle late
  logic [CntW-1:0] room_d, room_q;               // FIFO beats neither filled nor requested
  logic [CntW-1:0] inflight_d, inflight_q;       // beats requested, not yet received
  logic [CntW-1:0] fifo_count;
  logic [ChunkW-1:0] chunk_cmds;
  logic            fifo_valid, fifo_pop, fifo_push, fifo_ready;
  logic [AxiDataW-1:0] fifo_data;
  logic            req_fire, beat_in;

  // min(to_fetch, FetchChunkCmds), with narrow logic only (FetchChunkCmds is a power of two).
  function automatic logic [ChunkW-1:0] chunk_of(logic [31:0] to_fetch);
    chunk_of = to_fetch[31:ChunkW-1] != '0 ? ChunkW'(FetchChunkCmds)
                                          : ChunkW'(to_fetch[ChunkW-2:0]);
  endfunction

  // The request and its size are registers (req_avail_q: a chunk is left and the FIFO has room
  // for it), computed with the state they describe: the state after a request is known from
  // registers before the request is taken, so taking it only selects (the read DMA's arbiter
  // and everything behind it see a flop).
  logic [ChunkW-1:0] chunk_d, chunk_q, chunk_after_fire;
  logic              req_avail_d, req_avail_q, room_ok_stay, room_ok_fire;
  logic [CntW-1:0]   room_stay, room_fire;

  assign chunk_cmds       = chunk_q;
  // chunk_of(to_fetch_q - chunk_q) without a 32-bit subtraction: from 2*FetchChunkCmds commands
  // up a full chunk is left; below, the difference fits in ChunkW bits.
  logic [ChunkW-1:0] left_after_fire;
  assign left_after_fire  = to_fetch_q[ChunkW-1:0] - chunk_q;
  assign chunk_after_fire = to_fetch_q[31:ChunkW] != '0 || left_after_fire[ChunkW-1]
                          ? ChunkW'(FetchChunkCmds) : {1'b0, left_after_fire[ChunkW-2:0]};
  assign room_stay        = room_q + CntW'(fifo_pop);
  assign room_fire        = room_q - CntW'(32'(chunk_q) * CmdBeats) + CntW'(fifo_pop);
  assign room_ok_stay     = room_stay >= CntW'(32'(chunk_q) * CmdBeats);
  assign room_ok_fire     = room_fire >= CntW'(32'(chunk_after_fire) * CmdBeats);

  always_comb begin
    if (abort_i) begin
      chunk_d     = '0;
      req_avail_d = 1'b0;
    end else if (start_i) begin
      chunk_d     = chunk_of(count_i);
      req_avail_d = chunk_d != '0 && room_q >= CntW'(32'(chunk_d) * CmdBeats);
    end else if (req_fire) begin
      chunk_d     = chunk_after_fire;
      req_avail_d = chunk_d != '0 && room_ok_fire;
    end else begin
      chunk_d     = chunk_q;
      req_avail_d = chunk_d != '0 && room_ok_stay;
    end
  end

  assign req_valid_o     = req_avail_q && !abort_i;
  assign req_addr_o      = fetch_addr_q;
  assign req_row_bytes_o = 16'(32'(chunk_cmds) * nmsa_pkg::CmdBytes);
  assign req_rows_o      = 16'd1;
  assign req_stride_o    = '0;
  assign req_fire        = req_valid_o && req_ready_i;

  assign rd_ready_o = fifo_ready;
  assign beat_in    = rd_valid_i && rd_ready_o;
  assign fifo_push  = beat_in && !abort_i;

  nmsa_fifo #(
    .Width    (AxiDataW),
    .Depth    (FifoDepth),
    .BlockRam (BlockRamFifos)
  ) u_beats (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .flush_i     (clear_i | abort_i),
    .in_valid_i  (fifo_push),
    .in_ready_o  (fifo_ready),
    .in_data_i   (rd_data_i),
    .out_valid_o (fifo_valid),
    .out_ready_i (fifo_pop),
    .out_data_o  (fifo_data),
    .count_o     (fifo_count)
  );

  // ---------------------------------------------------------------------------------------------
  // Assemble
  // ---------------------------------------------------------------------------------------------
  logic [CmdBits-1:0] raw_q;         // beat b in bits [b*AxiDataW +: AxiDataW]
  logic [7:0]         raw_beats_d, raw_beats_q;
  logic [31:0]        asm_index_d, asm_index_q;   // index of the command being assembled
  logic               have_cmd, dec_take;

  assign have_cmd = raw_beats_q == 8'(CmdBeats);
  assign fifo_pop = fifo_valid && !have_cmd;

  // ---------------------------------------------------------------------------------------------
  // Decode: the fields, and what the range checks need, registered.
  // ---------------------------------------------------------------------------------------------
  nmsa_pkg::cmd_t raw_cmd, dec_cmd_q, chk_cmd_q;
  logic           dec_valid_q, chk_valid_q, chk_take, dispatch;
  logic [31:0]    load_bytes_q;     // count * size
  logic [31:0]    act_reach_q;      // count * act stride
  logic [3:0]     chk_code_d, chk_code_q;

  always_comb begin
    raw_cmd.index     = asm_index_q;
    raw_cmd.opcode    = raw_q[3:0];
    raw_cmd.pop_prev  = raw_q[4];
    raw_cmd.pop_next  = raw_q[5];
    raw_cmd.push_prev = raw_q[6];
    raw_cmd.push_next = raw_q[7];
    raw_cmd.target    = raw_q[11:8];
    raw_cmd.flag_a    = raw_q[12];
    raw_cmd.flag_b    = raw_q[13];
    raw_cmd.part      = raw_q[15:14];
    raw_cmd.addr      = raw_q[31:16];
    raw_cmd.count     = raw_q[47:32];
    raw_cmd.size      = raw_q[63:48];
    raw_cmd.word1     = raw_q[127:64];
    raw_cmd.word2     = raw_q[191:128];
  end

  // Where a LOAD's first entry starts and where its target ends, in bytes: it fits when
  // start + count * size <= end. The constant multiplies are shifts and adds.
  function automatic logic [32:0] times(logic [15:0] value, int unsigned constant);
    times = '0;
    for (int unsigned b = 0; b < 16; b++) begin
      if (((constant >> b) & 1) != 0) times = times + (33'(value) << b);
    end
  endfunction

  // The activation range check compares a registered product with room computed at decode, so
  // neither the multiplier's input nor the check stage holds a subtraction:
  //   COMPUTE: act addr + (count - 1) * stride < ActEntries
  //            <=>  count * stride < act_room_q (ActEntries - act addr + stride), count >= 1
  //            (count = 0 is a range error of its own; the multiplier takes count as it is)
  // An activation address past the buffer leaves no room (act_room_q = stride).
  logic [33:0] act_room_q;
  logic [32:0] load_start_d, load_start_q, load_end_q;

  always_comb begin
    unique case (raw_cmd.target)
      nmsa_pkg::TargetAct: load_start_d = times(raw_cmd.addr, ActEntryBytes);
      nmsa_pkg::TargetWgt: load_start_d = times(raw_cmd.addr, RecordBytes);
      default:             load_start_d = times(raw_cmd.addr, EpiBytes);
    endcase
  end

  // The two products come from registered multipliers (nmsa_mul: on ECP5 a DSP with its output
  // register), fed straight from the assembly register: a multiply between two fabric flops
  // across the die was the accelerator's longest path. Their two cycles of latency cost none:
  // count and size (beat 0) and the stride (beat 1) hold still from two cycles before the last
  // beat can arrive at the earliest, so the products are ready when decode takes the command.
  logic [31:0] load_bytes, act_reach;

  nmsa_mul #(
    .AW (16), .BW (16), .ASigned (1'b0), .BSigned (1'b0)
  ) u_load_bytes (
    .clk_i (clk_i), .a_i (raw_cmd.count), .b_i (raw_cmd.size), .p_o (load_bytes)
  );

  nmsa_mul #(
    .AW (16), .BW (16), .ASigned (1'b0), .BSigned (1'b0)
  ) u_act_reach (
    .clk_i (clk_i), .a_i (raw_cmd.count), .b_i (raw_cmd.word1[31:16]), .p_o (act_reach)
  );

  assign dec_take = have_cmd && !abort_i && (!dec_valid_q || chk_take);

  // ---------------------------------------------------------------------------------------------
  // Check, in order of precedence: opcode, dependency flags, alignment, ranges.
  // ---------------------------------------------------------------------------------------------
  nmsa_pkg::cmd_t c;
  logic [32:0] acc_end, store_end;
  logic [15:0] store_row_bytes;
  logic [63:0] store_row_mask;    // store_row_bytes - 1 (a power of two)
  logic        store_narrow, narrow_rows_fit, whole_row_lanes;

  assign c               = dec_cmd_q;
  assign acc_end         = 33'(c.word1[47:32]) + 33'(c.count);
  assign store_end       = 33'(c.addr) + 33'(c.count);
  assign store_row_bytes = c.flag_b ? 16'(Cols * 4) : 16'(Cols);
  assign store_row_mask  = c.flag_b ? 64'(Cols * 4) - 64'd1 : 64'(Cols) - 64'd1;
  assign store_narrow    = store_row_bytes < 16'(BeatB);
  // Every narrow row must lie inside one AXI word: the first row does, and the stride moves each
  // row by whole words, or by whole rows when the row size divides the word and the first row is
  // aligned to its size.
  assign whole_row_lanes = c.flag_b ? (BeatB % (Cols * 4) == 0) : (BeatB % Cols == 0);
  assign narrow_rows_fit =
      32'(c.word1[BeatOff-1:0]) + 32'(store_row_bytes) <= BeatB &&
      (c.word2 & store_row_mask) == '0 &&
      (c.word2[BeatOff-1:0] == '0 ||
       (whole_row_lanes && (c.word1 & store_row_mask) == '0));

  always_comb begin
    chk_code_d = nmsa_reg_pkg::NMSA_ERR_CODE_NONE;
    unique case (c.opcode)
      nmsa_pkg::OpLoad: begin
        if (c.target > nmsa_pkg::TargetEpi) begin
          chk_code_d = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_OPCODE;
        end else if (c.pop_prev || c.push_prev) begin
          chk_code_d = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_DEPS;
        end else if (c.word1[BeatOff-1:0] != '0 || c.word2[BeatOff-1:0] != '0 ||
                     c.size[BeatOff-1:0] != '0) begin
          chk_code_d = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_ALIGN;
        end else if (c.count == '0 || c.size == '0 ||
                     load_start_q + 33'(load_bytes_q) > load_end_q) begin
          chk_code_d = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_RANGE;
        end
      end
      nmsa_pkg::OpCompute: begin
        if (!Sparse && !c.flag_a) begin
          // The dense-only array has no N:M support (CAP_ARRAY.SPARSE = 0).
          chk_code_d = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_OPCODE;
        end else if (c.count == '0 || 33'(c.addr) + 33'(Rows) > 33'(WgtRecords) ||
                     34'(act_reach_q) >= act_room_q || acc_end > 33'(AccEntries) ||
                     (c.flag_a && 32'(c.part) >= (Sparse ? M / N : 1))) begin
          chk_code_d = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_RANGE;
        end
      end
      nmsa_pkg::OpStore: begin
        if (c.pop_next || c.push_next) begin
          chk_code_d = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_DEPS;
        end else if (store_narrow ? !narrow_rows_fit :
                     (c.word1[BeatOff-1:0] != '0 || c.word2[BeatOff-1:0] != '0)) begin
          chk_code_d = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_ALIGN;
        end else if (c.count == '0 || store_end > 33'(AccEntries) ||
                     c.size >= 16'(EpiEntries)) begin
          chk_code_d = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_RANGE;
        end
      end
      default: chk_code_d = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_OPCODE;
    endcase
  end

  assign chk_take = dec_valid_q && !abort_i && (!chk_valid_q || dispatch);

  // ---------------------------------------------------------------------------------------------
  // Dispatch
  // ---------------------------------------------------------------------------------------------
  // The check result and the opcode are also kept as flags (chk_ok_q, chk_is_*_q), loaded with
  // the command: the engines' ready then reaches the check and decode enables through two LUT
  // levels instead of an opcode compare and the error-code compare.
  logic cmd_ok, cmd_ready, chk_ok_q, chk_is_load_q, chk_is_compute_q, chk_is_store_q;

  assign cmd_o     = chk_cmd_q;
  assign cmd_ok    = chk_ok_q;
  assign cmd_ready = (chk_is_load_q && load_ready_i) || (chk_is_compute_q && compute_ready_i) ||
                     (chk_is_store_q && store_ready_i);

  assign dispatch        = chk_valid_q && cmd_ok && cmd_ready && !abort_i;

  assign load_valid_o    = chk_valid_q && cmd_ok && !abort_i && chk_is_load_q;
  assign compute_valid_o = chk_valid_q && cmd_ok && !abort_i && chk_is_compute_q;
  assign store_valid_o   = chk_valid_q && cmd_ok && !abort_i && chk_is_store_q;

  // The decode and check registers load on the handshakes without abort_i: what they take while
  // aborting is never used (abort clears the valid flags), and the enables of their few hundred
  // flops stay off the abort net.
  logic dec_load, chk_load;
  assign chk_load = dec_valid_q && (!chk_valid_q || (cmd_ok && cmd_ready));
  assign dec_load = have_cmd && (!dec_valid_q || chk_load);

  // ---------------------------------------------------------------------------------------------
  // Token balance over the stream: pushes minus pops per counter (load->compute, compute->load,
  // compute->store, store->compute). A dispatched command's pushes and pops are registered
  // first and counted a cycle later, so the dispatch handshake (the engines' ready) drives a few
  // flip-flops here instead of the counters' adders.
  // ---------------------------------------------------------------------------------------------
  logic signed [33:0] bal_l2c_d, bal_l2c_q, bal_c2l_d, bal_c2l_q;
  logic signed [33:0] bal_c2s_d, bal_c2s_q, bal_s2c_d, bal_s2c_q;
  logic               is_load, is_compute, is_store, stream_end, unbalanced;
  logic               disp_q, disp_last_q;       // a command was dispatched last cycle
  logic [3:0]         disp_push_q, disp_pop_q;   // its pushes and pops, per counter

  assign is_load    = chk_cmd_q.opcode == nmsa_pkg::OpLoad;
  assign is_compute = chk_cmd_q.opcode == nmsa_pkg::OpCompute;
  assign is_store   = chk_cmd_q.opcode == nmsa_pkg::OpStore;

  always_comb begin
    bal_l2c_d = bal_l2c_q;
    bal_c2l_d = bal_c2l_q;
    bal_c2s_d = bal_c2s_q;
    bal_s2c_d = bal_s2c_q;
    if (disp_q) begin
      bal_l2c_d = bal_l2c_q + 34'(disp_push_q[0]) - 34'(disp_pop_q[0]);
      bal_c2l_d = bal_c2l_q + 34'(disp_push_q[1]) - 34'(disp_pop_q[1]);
      bal_c2s_d = bal_c2s_q + 34'(disp_push_q[2]) - 34'(disp_pop_q[2]);
      bal_s2c_d = bal_s2c_q + 34'(disp_push_q[3]) - 34'(disp_pop_q[3]);
    end
  end

  // The last command's pushes and pops were counted in the previous cycle.
  logic        ended_d, ended_q;
  logic [31:0] last_index_q;
  assign stream_end = ended_q;
  assign ended_d    = disp_q && disp_last_q;
  assign unbalanced = stream_end &&
                      (bal_l2c_q < 0 || bal_c2l_q < 0 || bal_c2s_q < 0 || bal_s2c_q < 0);

  // ---------------------------------------------------------------------------------------------
  // Errors
  // ---------------------------------------------------------------------------------------------
  logic fetch_failed;
  assign fetch_failed = beat_in && rd_resp_i != 2'b00;

  always_comb begin
    err_valid_o = 1'b0;
    err_code_o  = nmsa_reg_pkg::NMSA_ERR_CODE_NONE;
    err_index_o = asm_index_q;
    if (fetch_failed) begin
      err_valid_o = 1'b1;
      err_code_o  = rd_resp_i == 2'b11 ? nmsa_reg_pkg::NMSA_ERR_CODE_AXI_DECERR
                                       : nmsa_reg_pkg::NMSA_ERR_CODE_AXI_SLVERR;
    end else if (chk_valid_q && !cmd_ok && !abort_i) begin
      err_valid_o = 1'b1;
      err_code_o  = chk_code_q;
      err_index_o = chk_cmd_q.index;
    end else if (unbalanced) begin
      err_valid_o = 1'b1;
      err_code_o  = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_DEPS;
      err_index_o = last_index_q;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // State
  // ---------------------------------------------------------------------------------------------
  always_comb begin
    fetch_addr_d = fetch_addr_q;
    to_fetch_d   = to_fetch_q;
    to_decode_d  = to_decode_q;
    room_d       = room_q;
    raw_beats_d  = raw_beats_q;
    asm_index_d  = asm_index_q;

    if (req_fire) begin
      fetch_addr_d = fetch_addr_q + 64'(32'(chunk_cmds) * nmsa_pkg::CmdBytes);
      to_fetch_d   = to_fetch_q - 32'(chunk_cmds);
    end
    // Room: a request takes it, a beat leaving the FIFO gives it back.
    room_d     = room_q - (req_fire ? CntW'(32'(chunk_cmds) * CmdBeats) : '0) +
                 (fifo_pop ? CntW'(1) : '0);
    inflight_d = inflight_q + (req_fire ? CntW'(32'(chunk_cmds) * CmdBeats) : '0) -
                 (beat_in ? CntW'(1) : '0);
    if (fifo_pop) begin
      raw_beats_d = raw_beats_q + 1'b1;
    end
    if (dec_take) begin
      raw_beats_d = '0;
      asm_index_d = asm_index_q + 1'b1;
    end
    // A dispatch is counted a cycle later (disp_q), so the engines' ready reaches a flag here
    // instead of the 32 counter bits.
    if (disp_q) begin
      to_decode_d = to_decode_q - 1'b1;
    end
    if (start_i) begin
      fetch_addr_d = base_i;
      to_fetch_d   = count_i;
      to_decode_d  = count_i;
      raw_beats_d  = '0;
      asm_index_d  = '0;
    end
    if (abort_i) begin
      to_fetch_d  = '0;
      to_decode_d = '0;
    end
  end

  // Chunks end where the data ends; the beat count already tells where each command ends. The
  // command's word 3 is unused (docs/isa.md).
  logic unused;
  assign unused = ^{rd_last_i, fifo_count, c.index, raw_q[CmdBits-1:192]};

  // Quiet: no fetch in flight or asked for, and no command moves. Commands may sit in the fetch
  // FIFO and the decode and check registers, blocked behind a queue that a deadlock keeps full:
  // the deadlock detector must see that too.
  assign quiet_o = inflight_q == '0 && !req_valid_o && !dec_take && !chk_take && !dispatch;

  // Busy while commands remain or fetched beats are still on their way (they must be drained).
  assign busy_o = to_decode_q != '0 || inflight_q != '0 || disp_q || ended_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      fetch_addr_q <= '0;
      to_fetch_q   <= '0;
      to_decode_q  <= '0;
      room_q       <= CntW'(FifoDepth);
      chunk_q      <= '0;
      req_avail_q  <= 1'b0;
      inflight_q   <= '0;
      raw_beats_q  <= '0;
      asm_index_q  <= '0;
      dec_valid_q  <= 1'b0;
      chk_valid_q  <= 1'b0;
      disp_q       <= 1'b0;
      ended_q      <= 1'b0;
      bal_l2c_q    <= '0;
      bal_c2l_q    <= '0;
      bal_c2s_q    <= '0;
      bal_s2c_q    <= '0;
    end else if (clear_i) begin
      fetch_addr_q <= '0;
      to_fetch_q   <= '0;
      to_decode_q  <= '0;
      room_q       <= CntW'(FifoDepth);
      chunk_q      <= '0;
      req_avail_q  <= 1'b0;
      inflight_q   <= '0;
      raw_beats_q  <= '0;
      asm_index_q  <= '0;
      dec_valid_q  <= 1'b0;
      chk_valid_q  <= 1'b0;
      disp_q       <= 1'b0;
      ended_q      <= 1'b0;
      bal_l2c_q    <= '0;
      bal_c2l_q    <= '0;
      bal_c2s_q    <= '0;
      bal_s2c_q    <= '0;
    end else begin
      fetch_addr_q <= fetch_addr_d;
      to_fetch_q   <= to_fetch_d;
      to_decode_q  <= to_decode_d;
      // After an abort no request is made again before a soft reset, which restores the room.
      room_q       <= room_d;
      chunk_q      <= chunk_d;
      req_avail_q  <= req_avail_d;
      inflight_q   <= inflight_d;
      raw_beats_q  <= raw_beats_d;
      asm_index_q  <= asm_index_d;
      dec_valid_q  <= abort_i ? 1'b0 : (dec_take || (dec_valid_q && !chk_take));
      chk_valid_q  <= abort_i ? 1'b0 : (chk_take || (chk_valid_q && !dispatch));
      disp_q       <= dispatch && !start_i;
      ended_q      <= ended_d;
      bal_l2c_q    <= start_i ? '0 : bal_l2c_d;
      bal_c2l_q    <= start_i ? '0 : bal_c2l_d;
      bal_c2s_q    <= start_i ? '0 : bal_c2s_d;
      bal_s2c_q    <= start_i ? '0 : bal_s2c_d;
    end
  end

  // Each beat is written in its place (not shifted in), so a field holds still from the cycle
  // after its beat arrives.
  always_ff @(posedge clk_i) begin
    for (int unsigned b = 0; b < CmdBeats; b++) begin
      if (fifo_pop && raw_beats_q == 8'(b)) raw_q[b*AxiDataW +: AxiDataW] <= fifo_data;
    end
  end

  always_ff @(posedge clk_i) begin
    if (dec_load) begin
      dec_cmd_q    <= raw_cmd;
      load_bytes_q <= load_bytes;
      act_reach_q  <= act_reach;
      load_start_q <= load_start_d;
      unique case (raw_cmd.target)
        nmsa_pkg::TargetAct: load_end_q <= 33'(ActEntries) * 33'(ActEntryBytes);
        nmsa_pkg::TargetWgt: load_end_q <= 33'(WgtRecords) * 33'(RecordBytes);
        default:             load_end_q <= 33'(EpiEntries) * 33'(EpiBytes);
      endcase
      act_room_q   <= (33'(raw_cmd.word1[15:0]) >= 33'(ActEntries) ? 34'd0 :
                       34'(ActEntries) - 34'(raw_cmd.word1[15:0])) + 34'(raw_cmd.word1[31:16]);
    end
    if (chk_load) begin
      chk_cmd_q        <= dec_cmd_q;
      chk_code_q       <= chk_code_d;
      chk_ok_q         <= chk_code_d == nmsa_reg_pkg::NMSA_ERR_CODE_NONE;
      chk_is_load_q    <= dec_cmd_q.opcode == nmsa_pkg::OpLoad;
      chk_is_compute_q <= dec_cmd_q.opcode == nmsa_pkg::OpCompute;
      chk_is_store_q   <= dec_cmd_q.opcode == nmsa_pkg::OpStore;
    end
    if (dispatch) last_index_q <= chk_cmd_q.index;
    // to_decode_q has not yet counted the command dispatched last cycle (disp_q).
    disp_last_q <= to_decode_q == (disp_q ? 32'd2 : 32'd1);
    disp_push_q <= {is_store && chk_cmd_q.push_prev, is_compute && chk_cmd_q.push_next,
                    is_compute && chk_cmd_q.push_prev, is_load && chk_cmd_q.push_next};
    disp_pop_q  <= {is_compute && chk_cmd_q.pop_next, is_store && chk_cmd_q.pop_prev,
                    is_load && chk_cmd_q.pop_next, is_compute && chk_cmd_q.pop_prev};
  end

`ifndef SYNTHESIS
  always @(posedge clk_i or negedge rst_ni) begin
    if (rst_ni) begin
      // The multipliers' products are those of the command decode takes.
      if (dec_load) begin
        assert (load_bytes == 32'(raw_cmd.count) * 32'(raw_cmd.size))
          else $error("nmsa_cmd: LOAD byte count differs from count x size");
        assert (act_reach == 32'(raw_cmd.count) * 32'(raw_cmd.word1[31:16]))
          else $error("nmsa_cmd: LOAD reach differs from count x stride");
      end
      // The registered request describes the fetch state it was computed for.
      assert (chunk_q == chunk_of(to_fetch_q))
        else $error("nmsa_cmd: fetch chunk differs from the commands left");
      assert (chunk_after_fire == chunk_of(to_fetch_q - 32'(chunk_q)))
        else $error("nmsa_cmd: next fetch chunk differs from the commands left");
      if (chk_valid_q) begin
        assert (chk_ok_q == (chk_code_q == nmsa_reg_pkg::NMSA_ERR_CODE_NONE))
          else $error("nmsa_cmd: checked command's ok flag disagrees with its error code");
        assert (chk_is_load_q == (chk_cmd_q.opcode == nmsa_pkg::OpLoad))
          else $error("nmsa_cmd: checked command's LOAD flag disagrees with its opcode");
        assert (chk_is_store_q == (chk_cmd_q.opcode == nmsa_pkg::OpStore))
          else $error("nmsa_cmd: checked command's STORE flag disagrees with its opcode");
      end
      assert (req_avail_q == (chunk_q != '0 && room_q >= CntW'(32'(chunk_q) * CmdBeats)))
        else $error("nmsa_cmd: fetch request flag disagrees with the chunk and the room");
    end
  end
`endif

endmodule

`default_nettype wire
