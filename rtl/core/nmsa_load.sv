// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Load engine: runs LOAD commands (docs/isa.md). Each LOAD becomes one 2-D DMA read whose beats
// are written, in order, into consecutive entries of the target buffer from the command's first
// entry on. The command processor has already checked alignment and ranges.
`default_nettype none

module nmsa_load #(
  parameter int unsigned AxiDataW = 64,
  parameter int unsigned ActBeats = 4,   // AXI beats per activation entry
  parameter int unsigned WgtBeats = 3,   // ... per weight record
  parameter int unsigned EpiBeats = 12   // ... per epilogue-parameter entry
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

  typedef enum logic [1:0] {
    StIdle,
    StRequest,
    StData
  } state_e;

  state_e         state_d, state_q;
  nmsa_pkg::cmd_t cmd_d, cmd_q;
  logic [15:0]    entry_d, entry_q;
  logic [7:0]     lane_d, lane_q;
  logic           failed_d, failed_q;   // an error response arrived for this command
  logic [7:0]     beats_per_entry;
  logic           accept, beat;

  always_comb begin
    unique case (cmd_q.target)
      nmsa_pkg::TargetAct: beats_per_entry = 8'(ActBeats);
      nmsa_pkg::TargetWgt: beats_per_entry = 8'(WgtBeats);
      default:             beats_per_entry = 8'(EpiBeats);
    endcase
  end

  assign accept      = (state_q == StIdle) && cmd_valid_i && !abort_i &&
                       (!cmd_i.pop_next || c2l_avail_i);
  assign cmd_ready_o = accept;
  assign c2l_pop_o   = accept && cmd_i.pop_next;

  assign req_valid_o     = state_q == StRequest;
  assign req_addr_o      = cmd_q.word1;
  assign req_row_bytes_o = cmd_q.size;
  assign req_rows_o      = cmd_q.count;
  assign req_stride_o    = cmd_q.word2;

  // Data beats are always taken, also after an error, so that the DMA drains.
  assign rd_ready_o = state_q == StData;
  assign beat       = rd_valid_i && rd_ready_o;

  assign wr_en_o     = beat && !failed_q && rd_resp_i == 2'b00 && !abort_i;
  assign wr_target_o = cmd_q.target;
  assign wr_entry_o  = entry_q;
  assign wr_lane_o   = lane_q;
  assign wr_data_o   = rd_data_i;

  assign err_valid_o = beat && rd_resp_i != 2'b00 && !failed_q;
  assign err_resp_o  = rd_resp_i;
  assign err_index_o = cmd_q.index;
  assign l2c_push_o  = beat && rd_last_i && !failed_d && cmd_q.push_next;
  assign busy_o      = state_q != StIdle;

  always_comb begin
    state_d  = state_q;
    cmd_d    = cmd_q;
    entry_d  = entry_q;
    lane_d   = lane_q;
    failed_d = failed_q;
    unique case (state_q)
      StIdle: begin
        if (accept) begin
          cmd_d    = cmd_i;
          entry_d  = cmd_i.addr;
          lane_d   = '0;
          failed_d = 1'b0;
          state_d  = StRequest;
        end
      end
      StRequest: begin
        if (req_ready_i) state_d = StData;
      end
      StData: begin
        if (beat) begin
          if (rd_resp_i != 2'b00) failed_d = 1'b1;
          if (lane_q == beats_per_entry - 1'b1) begin
            lane_d  = '0;
            entry_d = entry_q + 1'b1;
          end else begin
            lane_d = lane_q + 1'b1;
          end
          if (rd_last_i) state_d = StIdle;
        end
      end
      default: state_d = StIdle;
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q  <= StIdle;
      failed_q <= 1'b0;
    end else if (clear_i) begin
      state_q  <= StIdle;
      failed_q <= 1'b0;
    end else begin
      state_q  <= state_d;
      failed_q <= failed_d;
    end
  end

  always_ff @(posedge clk_i) begin
    cmd_q   <= cmd_d;
    entry_q <= entry_d;
    lane_q  <= lane_d;
  end

endmodule

`default_nettype wire
