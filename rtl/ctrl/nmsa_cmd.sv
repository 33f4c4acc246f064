// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Command processor: fetches the command stream from host memory by DMA (in chunks, several in
// flight), checks every command against docs/isa.md and the buffer sizes, and dispatches it in
// order to the queue of its engine. It also keeps the balance of dependency tokens over the whole
// stream: a stream that pops more than it pushes could never finish and is refused (BAD_DEPS).
`default_nettype none

module nmsa_cmd #(
  parameter int unsigned AxiDataW      = 64,
  parameter int unsigned Rows          = 8,
  parameter int unsigned Cols          = 8,
  parameter int unsigned N             = 2,
  parameter int unsigned M             = 4,
  parameter int unsigned ActEntries    = 2048,
  parameter int unsigned ActEntryBytes = 32,
  parameter int unsigned WgtRecords    = 256,
  parameter int unsigned RecordBytes   = 24,
  parameter int unsigned EpiEntries    = 64,
  parameter int unsigned AccEntries    = 2048
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
  output logic                  quiet_o        // nothing fetched, buffered or dispatchable now
);

  localparam int unsigned CmdBits   = 256;
  localparam int unsigned CmdBeats  = CmdBits / AxiDataW;
  localparam int unsigned ChunkCmds = 8;
  localparam int unsigned FifoDepth = 2 * ChunkCmds * CmdBeats;
  localparam int unsigned CntW      = $clog2(FifoDepth) + 1;
  localparam int unsigned BeatB     = AxiDataW / 8;

  if (CmdBits % AxiDataW != 0) begin : g_bad_width
    $error("nmsa_cmd: AxiDataW must divide 256");
  end

  // ---------------------------------------------------------------------------------------------
  // Fetch
  // ---------------------------------------------------------------------------------------------
  logic [63:0]     fetch_addr_d, fetch_addr_q;
  logic [31:0]     to_fetch_d, to_fetch_q;       // commands not yet requested
  logic [31:0]     to_decode_d, to_decode_q;     // commands not yet dispatched
  logic [CntW-1:0] inflight_d, inflight_q;       // beats requested, not yet received
  logic [CntW-1:0] fifo_count;
  logic [31:0]     chunk_cmds;
  logic            fifo_valid, fifo_pop, fifo_push, fifo_ready;
  logic [AxiDataW-1:0] fifo_data;
  logic            req_fire, beat_in;

  assign chunk_cmds = (to_fetch_q < 32'(ChunkCmds)) ? to_fetch_q : 32'(ChunkCmds);

  assign req_valid_o     = to_fetch_q != '0 && !abort_i &&
                           (32'(fifo_count) + 32'(inflight_q) + chunk_cmds * CmdBeats
                            <= 32'(FifoDepth));
  assign req_addr_o      = fetch_addr_q;
  assign req_row_bytes_o = 16'(chunk_cmds * nmsa_pkg::CmdBytes);
  assign req_rows_o      = 16'd1;
  assign req_stride_o    = '0;
  assign req_fire        = req_valid_o && req_ready_i;

  assign rd_ready_o = fifo_ready;
  assign beat_in    = rd_valid_i && rd_ready_o;
  assign fifo_push  = beat_in && !abort_i;

  nmsa_fifo #(
    .Width (AxiDataW),
    .Depth (FifoDepth)
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
  // Assemble, check, dispatch
  // ---------------------------------------------------------------------------------------------
  logic [CmdBits-1:0] raw_d, raw_q;
  logic [7:0]         raw_beats_d, raw_beats_q;
  logic [31:0]        index_d, index_q;
  logic               have_cmd, dispatch, cmd_ready, cmd_ok;
  logic [3:0]         check_code;
  nmsa_pkg::cmd_t     cmd;

  assign have_cmd = raw_beats_q == 8'(CmdBeats);
  assign fifo_pop = fifo_valid && !have_cmd;

  always_comb begin
    cmd.index     = index_q;
    cmd.opcode    = raw_q[3:0];
    cmd.pop_prev  = raw_q[4];
    cmd.pop_next  = raw_q[5];
    cmd.push_prev = raw_q[6];
    cmd.push_next = raw_q[7];
    cmd.target    = raw_q[11:8];
    cmd.flag_a    = raw_q[12];
    cmd.flag_b    = raw_q[13];
    cmd.part      = raw_q[15:14];
    cmd.addr      = raw_q[31:16];
    cmd.count     = raw_q[47:32];
    cmd.size      = raw_q[63:48];
    cmd.word1     = raw_q[127:64];
    cmd.word2     = raw_q[191:128];
  end
  assign cmd_o = cmd;

  // Checks of docs/isa.md, in order of precedence: opcode, dependency flags, alignment, ranges.
  logic [32:0] load_bytes, load_room, act_last, acc_end, store_end;
  logic [15:0] store_row_bytes;
  logic        store_narrow;

  assign load_bytes = 33'(cmd.count) * 33'(cmd.size);
  always_comb begin
    unique case (cmd.target)
      nmsa_pkg::TargetAct: load_room = cmd.addr < 16'(ActEntries) ?
          (33'(ActEntries) - 33'(cmd.addr)) * 33'(ActEntryBytes) : '0;
      nmsa_pkg::TargetWgt: load_room = cmd.addr < 16'(WgtRecords) ?
          (33'(WgtRecords) - 33'(cmd.addr)) * 33'(RecordBytes) : '0;
      default:             load_room = cmd.addr < 16'(EpiEntries) ?
          (33'(EpiEntries) - 33'(cmd.addr)) * 33'(Cols * 12) : '0;
    endcase
  end
  assign act_last        = 33'(cmd.word1[15:0]) + (33'(cmd.count) - 33'd1) * 33'(cmd.word1[31:16]);
  assign acc_end         = 33'(cmd.word1[47:32]) + 33'(cmd.count);
  assign store_end       = 33'(cmd.addr) + 33'(cmd.count);
  assign store_row_bytes = cmd.flag_b ? 16'(Cols * 4) : 16'(Cols);
  assign store_narrow    = store_row_bytes < 16'(BeatB);

  // Every narrow row must lie inside one AXI word: the first row does, and the stride moves each
  // row by whole words, or by whole rows when the row size divides the word and the first row is
  // aligned to its size.
  logic narrow_rows_fit;
  assign narrow_rows_fit =
      32'(cmd.word1[$clog2(BeatB)-1:0]) + 32'(store_row_bytes) <= BeatB &&
      cmd.word2 % 64'(store_row_bytes) == '0 &&
      (cmd.word2 % 64'(BeatB) == '0 ||
       (BeatB % 32'(store_row_bytes) == 0 && cmd.word1 % 64'(store_row_bytes) == '0));

  always_comb begin
    check_code = nmsa_reg_pkg::NMSA_ERR_CODE_NONE;
    unique case (cmd.opcode)
      nmsa_pkg::OpLoad: begin
        if (cmd.target > nmsa_pkg::TargetEpi) begin
          check_code = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_OPCODE;
        end else if (cmd.pop_prev || cmd.push_prev) begin
          check_code = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_DEPS;
        end else if (cmd.word1[2:0] != '0 || cmd.word2[2:0] != '0 || cmd.size[2:0] != '0) begin
          check_code = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_ALIGN;
        end else if (cmd.count == '0 || cmd.size == '0 || load_bytes > load_room) begin
          check_code = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_RANGE;
        end
      end
      nmsa_pkg::OpCompute: begin
        if (cmd.count == '0 || 33'(cmd.addr) + 33'(Rows) > 33'(WgtRecords) ||
            act_last >= 33'(ActEntries) || acc_end > 33'(AccEntries) ||
            (cmd.flag_a && 32'(cmd.part) >= M / N)) begin
          check_code = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_RANGE;
        end
      end
      nmsa_pkg::OpStore: begin
        if (cmd.pop_next || cmd.push_next) begin
          check_code = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_DEPS;
        end else if (store_narrow ? !narrow_rows_fit :
                     (cmd.word1[2:0] != '0 || cmd.word2[2:0] != '0)) begin
          check_code = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_ALIGN;
        end else if (cmd.count == '0 || store_end > 33'(AccEntries) ||
                     cmd.size >= 16'(EpiEntries)) begin
          check_code = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_RANGE;
        end
      end
      default: check_code = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_OPCODE;
    endcase
  end

  assign cmd_ok = check_code == nmsa_reg_pkg::NMSA_ERR_CODE_NONE;

  always_comb begin
    unique case (cmd.opcode)
      nmsa_pkg::OpLoad:    cmd_ready = load_ready_i;
      nmsa_pkg::OpCompute: cmd_ready = compute_ready_i;
      default:             cmd_ready = store_ready_i;
    endcase
  end

  assign dispatch        = have_cmd && cmd_ok && cmd_ready && !abort_i;
  assign load_valid_o    = have_cmd && cmd_ok && !abort_i && cmd.opcode == nmsa_pkg::OpLoad;
  assign compute_valid_o = have_cmd && cmd_ok && !abort_i && cmd.opcode == nmsa_pkg::OpCompute;
  assign store_valid_o   = have_cmd && cmd_ok && !abort_i && cmd.opcode == nmsa_pkg::OpStore;

  // ---------------------------------------------------------------------------------------------
  // Token balance over the stream: pushes minus pops per counter (load->compute, compute->load,
  // compute->store, store->compute).
  // ---------------------------------------------------------------------------------------------
  logic signed [33:0] bal_l2c_d, bal_l2c_q, bal_c2l_d, bal_c2l_q;
  logic signed [33:0] bal_c2s_d, bal_c2s_q, bal_s2c_d, bal_s2c_q;
  logic               is_load, is_compute, is_store, stream_end, unbalanced;

  assign is_load    = cmd.opcode == nmsa_pkg::OpLoad;
  assign is_compute = cmd.opcode == nmsa_pkg::OpCompute;
  assign is_store   = cmd.opcode == nmsa_pkg::OpStore;

  always_comb begin
    bal_l2c_d = bal_l2c_q;
    bal_c2l_d = bal_c2l_q;
    bal_c2s_d = bal_c2s_q;
    bal_s2c_d = bal_s2c_q;
    if (dispatch) begin
      bal_l2c_d = bal_l2c_q + 34'(is_load && cmd.push_next) - 34'(is_compute && cmd.pop_prev);
      bal_c2l_d = bal_c2l_q + 34'(is_compute && cmd.push_prev) - 34'(is_load && cmd.pop_next);
      bal_c2s_d = bal_c2s_q + 34'(is_compute && cmd.push_next) - 34'(is_store && cmd.pop_prev);
      bal_s2c_d = bal_s2c_q + 34'(is_store && cmd.push_prev) - 34'(is_compute && cmd.pop_next);
    end
  end

  // The last command was dispatched in the previous cycle.
  logic ended_d, ended_q;
  assign stream_end = ended_q;
  assign ended_d    = dispatch && to_decode_q == 32'd1;
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
    err_index_o = index_q;
    if (fetch_failed) begin
      err_valid_o = 1'b1;
      err_code_o  = rd_resp_i == 2'b11 ? nmsa_reg_pkg::NMSA_ERR_CODE_AXI_DECERR
                                       : nmsa_reg_pkg::NMSA_ERR_CODE_AXI_SLVERR;
    end else if (have_cmd && !cmd_ok && !abort_i) begin
      err_valid_o = 1'b1;
      err_code_o  = check_code;
    end else if (unbalanced) begin
      err_valid_o = 1'b1;
      err_code_o  = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_DEPS;
      err_index_o = index_q - 1'b1;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // State
  // ---------------------------------------------------------------------------------------------
  always_comb begin
    fetch_addr_d = fetch_addr_q;
    to_fetch_d   = to_fetch_q;
    to_decode_d  = to_decode_q;
    inflight_d   = inflight_q;
    raw_d        = raw_q;
    raw_beats_d  = raw_beats_q;
    index_d      = index_q;

    if (req_fire) begin
      fetch_addr_d = fetch_addr_q + 64'(chunk_cmds * nmsa_pkg::CmdBytes);
      to_fetch_d   = to_fetch_q - chunk_cmds;
    end
    inflight_d = inflight_q + (req_fire ? CntW'(chunk_cmds * CmdBeats) : '0) -
                 (beat_in ? CntW'(1) : '0);
    if (fifo_pop) begin
      raw_d       = {fifo_data, raw_q[CmdBits-1:AxiDataW]};
      raw_beats_d = raw_beats_q + 1'b1;
    end
    if (dispatch) begin
      raw_beats_d = '0;
      index_d     = index_q + 1'b1;
      to_decode_d = to_decode_q - 1'b1;
    end
    if (start_i) begin
      fetch_addr_d = base_i;
      to_fetch_d   = count_i;
      to_decode_d  = count_i;
      raw_beats_d  = '0;
      index_d      = '0;
    end
    if (abort_i) begin
      to_fetch_d  = '0;
      to_decode_d = '0;
    end
  end

  // Chunks end where the data ends; the beat count already tells where each command ends.
  logic unused;
  assign unused = rd_last_i;

  assign quiet_o = inflight_q == '0 && !fifo_valid && !req_valid_o && !dispatch;

  // Busy while commands remain or fetched beats are still on their way (they must be drained).
  assign busy_o = to_decode_q != '0 || inflight_q != '0 || ended_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      fetch_addr_q <= '0;
      to_fetch_q   <= '0;
      to_decode_q  <= '0;
      inflight_q   <= '0;
      raw_beats_q  <= '0;
      index_q      <= '0;
      ended_q      <= 1'b0;
      bal_l2c_q    <= '0;
      bal_c2l_q    <= '0;
      bal_c2s_q    <= '0;
      bal_s2c_q    <= '0;
    end else if (clear_i) begin
      fetch_addr_q <= '0;
      to_fetch_q   <= '0;
      to_decode_q  <= '0;
      inflight_q   <= '0;
      raw_beats_q  <= '0;
      index_q      <= '0;
      ended_q      <= 1'b0;
      bal_l2c_q    <= '0;
      bal_c2l_q    <= '0;
      bal_c2s_q    <= '0;
      bal_s2c_q    <= '0;
    end else begin
      fetch_addr_q <= fetch_addr_d;
      to_fetch_q   <= to_fetch_d;
      to_decode_q  <= to_decode_d;
      inflight_q   <= inflight_d;
      raw_beats_q  <= raw_beats_d;
      index_q      <= index_d;
      ended_q      <= ended_d;
      bal_l2c_q    <= start_i ? '0 : bal_l2c_d;
      bal_c2l_q    <= start_i ? '0 : bal_c2l_d;
      bal_c2s_q    <= start_i ? '0 : bal_c2s_d;
      bal_s2c_q    <= start_i ? '0 : bal_s2c_d;
    end
  end

  always_ff @(posedge clk_i) begin
    raw_q <= raw_d;
  end

endmodule

`default_nettype wire
