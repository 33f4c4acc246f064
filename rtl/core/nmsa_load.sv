// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Load engine: runs LOAD commands (docs/isa.md). Each LOAD becomes one 2-D DMA read whose beats
// are written, in order, into consecutive entries of the target buffer from the command's first
// entry on. The command processor has already checked alignment and ranges.
//
// Requests and data are decoupled: the next LOAD's request goes to the DMA while the beats of
// earlier ones are still arriving (up to PendDepth LOADs), so the host memory's latency is paid
// once per stream rather than once per LOAD. LOADs still finish, and give their tokens, in order.
// The buffer write of a beat is registered (it happens the cycle after the beat), and so is the
// token of a LOAD's last beat, so the token never overtakes the data.
//
// Epilogue parameters are written as EpiGroups sub-entries per entry (the store engine reads one
// group of channels per cycle): beat b of an entry goes to lane b % EpiBeats of sub-entry
// entry * EpiGroups + b / EpiBeats.
`default_nettype none

module nmsa_load #(
  parameter int unsigned AxiDataW  = 64,
  parameter int unsigned ActBeats  = 4,   // AXI beats per activation entry
  parameter int unsigned WgtBeats  = 3,   // ... per weight record
  parameter int unsigned EpiBeats  = 6,   // ... per epilogue-parameter sub-entry
  parameter int unsigned EpiGroups = 2,   // sub-entries per epilogue-parameter entry
  parameter int unsigned PendDepth = 4    // LOADs requested and not yet finished
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  clear_i,
  input  logic                  abort_i,

  input  logic                  cmd_valid_i,
  output logic                  cmd_ready_o,
  input  nmsa_pkg::cmd_t        cmd_i,

  input  logic                  c2l_avail_i,
  output logic                  c2l_pop_o,
  output logic                  l2c_push_o,

  // DMA read request and data.
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

  // Buffer write: one AXI beat into lane `wr_lane_o` of entry `wr_entry_o` of `wr_target_o`.
  output logic                  wr_en_o,
  output logic [3:0]            wr_target_o,
  output logic [15:0]           wr_entry_o,
  output logic [7:0]            wr_lane_o,
  output logic [AxiDataW-1:0]   wr_data_o,

  output logic                  err_valid_o,
  output logic [1:0]            err_resp_o,
  output logic [31:0]           err_index_o,
  output logic                  busy_o
);

  // ---------------------------------------------------------------------------------------------
  // Request stage: take a command once its token is there, hand its request to the DMA.
  // ---------------------------------------------------------------------------------------------
  // What the data side needs of a LOAD whose request went to the DMA.
  typedef struct packed {
    logic [31:0] index;
    logic        push_next;
    logic [3:0]  target;
    logic [15:0] addr;
  } pending_t;
  localparam int unsigned PendW = 32 + 1 + 4 + 16;  // $bits(pending_t), for Yosys 0.23

  nmsa_pkg::cmd_t req_cmd_q;
  logic           req_pending_q;   // a request waiting for the DMA
  logic           pend_ready, pend_valid;
  pending_t       req_pend, data_cmd;  // data_cmd: the LOAD whose beats arrive now
  logic [$clog2(PendDepth):0] pend_count;
  logic           accept, req_fire;

  assign accept      = (!req_pending_q || req_fire) && cmd_valid_i && !abort_i &&
                       (!cmd_i.pop_next || c2l_avail_i);
  assign cmd_ready_o = accept;
  assign c2l_pop_o   = accept && cmd_i.pop_next;

  // A request is issued only when its LOAD has room in the pending FIFO, so data always finds
  // its command there.
  assign req_valid_o     = req_pending_q && pend_ready && !abort_i;
  assign req_fire        = req_valid_o && req_ready_i;
  assign req_addr_o      = req_cmd_q.word1;
  assign req_row_bytes_o = req_cmd_q.size;
  assign req_rows_o      = req_cmd_q.count;
  assign req_stride_o    = req_cmd_q.word2;

  assign req_pend = {req_cmd_q.index, req_cmd_q.push_next, req_cmd_q.target, req_cmd_q.addr};

  nmsa_fifo #(
    .Width (PendW),
    .Depth (PendDepth)
  ) u_pending (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .flush_i     (clear_i),
    .in_valid_i  (req_fire),
    .in_ready_o  (pend_ready),
    .in_data_i   (req_pend),
    .out_valid_o (pend_valid),
    .out_ready_i (beat && rd_last_i),
    .out_data_o  (data_cmd),
    .count_o     (pend_count)
  );

  // ---------------------------------------------------------------------------------------------
  // Data stage: write the beats of the oldest requested LOAD.
  // ---------------------------------------------------------------------------------------------
  logic [15:0] entry_d, entry_q;      // offset from the command's first entry
  logic [7:0]  lane_d, lane_q;
  logic        failed_d, failed_q;    // an error response arrived for this command
  logic [7:0]  beats_per_entry;
  logic        beat;

  always_comb begin
    unique case (data_cmd.target)
      nmsa_pkg::TargetAct: beats_per_entry = 8'(ActBeats);
      nmsa_pkg::TargetWgt: beats_per_entry = 8'(WgtBeats);
      default:             beats_per_entry = 8'(EpiBeats);
    endcase
  end

  // Data beats are always taken, also after an error or an abort, so that the DMA drains.
  assign rd_ready_o = pend_valid;
  assign beat       = rd_valid_i && rd_ready_o;

  // Registered buffer write and token.
  logic                wr_en_q, push_q;
  logic [3:0]          wr_target_q;
  logic [15:0]         wr_entry_q, first_entry;
  logic [7:0]          wr_lane_q;
  logic [AxiDataW-1:0] wr_data_q;

  assign first_entry = data_cmd.target == nmsa_pkg::TargetEpi ?
                       16'(32'(data_cmd.addr) * EpiGroups) : data_cmd.addr;

  assign wr_en_o     = wr_en_q;
  assign wr_target_o = wr_target_q;
  assign wr_entry_o  = wr_entry_q;
  assign wr_lane_o   = wr_lane_q;
  assign wr_data_o   = wr_data_q;
  assign l2c_push_o  = push_q;

  assign err_valid_o = beat && rd_resp_i != 2'b00 && !failed_q;
  assign err_resp_o  = rd_resp_i;
  assign err_index_o = data_cmd.index;
  assign busy_o      = req_pending_q || pend_valid || wr_en_q || push_q;

  always_comb begin
    entry_d  = entry_q;
    lane_d   = lane_q;
    failed_d = failed_q;
    if (beat) begin
      if (rd_resp_i != 2'b00) failed_d = 1'b1;
      if (lane_q == beats_per_entry - 1'b1) begin
        lane_d  = '0;
        entry_d = entry_q + 1'b1;
      end else begin
        lane_d = lane_q + 1'b1;
      end
      if (rd_last_i) begin
        entry_d  = '0;
        lane_d   = '0;
        failed_d = 1'b0;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      req_pending_q <= 1'b0;
      entry_q       <= '0;
      lane_q        <= '0;
      failed_q      <= 1'b0;
      wr_en_q       <= 1'b0;
      push_q        <= 1'b0;
    end else if (clear_i) begin
      req_pending_q <= 1'b0;
      entry_q       <= '0;
      lane_q        <= '0;
      failed_q      <= 1'b0;
      wr_en_q       <= 1'b0;
      push_q        <= 1'b0;
    end else begin
      wr_en_q       <= beat && !failed_q && rd_resp_i == 2'b00 && !abort_i;
      push_q        <= beat && rd_last_i && !failed_d && data_cmd.push_next && !abort_i;
      // An abort drops a request the DMA has not taken; taken ones drain through the data stage.
      req_pending_q <= abort_i ? 1'b0 : (accept || (req_pending_q && !req_fire));
      entry_q       <= entry_d;
      lane_q        <= lane_d;
      failed_q      <= failed_d;
    end
  end

  always_ff @(posedge clk_i) begin
    if (accept) req_cmd_q <= cmd_i;
    wr_target_q <= data_cmd.target;
    wr_entry_q  <= first_entry + entry_q;
    wr_lane_q   <= lane_q;
    wr_data_q   <= rd_data_i;
  end

  logic unused;
  assign unused = ^{pend_count, req_cmd_q.opcode, req_cmd_q.pop_prev, req_cmd_q.pop_next,
                    req_cmd_q.push_prev, req_cmd_q.flag_a, req_cmd_q.flag_b, req_cmd_q.part};

endmodule

`default_nettype wire
