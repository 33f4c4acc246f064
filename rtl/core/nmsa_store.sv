// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Store engine: runs STORE commands (docs/isa.md). Reads the epilogue parameters once, then for
// every accumulator row: reads it, applies the epilogue, and hands the row to the DMA as AXI
// beats; the command finishes when the DMA reports all write responses.
`default_nettype none

module nmsa_store #(
  parameter int unsigned Cols       = 8,
  parameter int unsigned AccW       = 32,
  parameter int unsigned AccEntries = 2048,
  parameter int unsigned EpiEntries = 64,
  parameter int unsigned AxiDataW   = 64
) (
  input  logic                            clk_i,
  input  logic                            rst_ni,
  input  logic                            clear_i,
  input  logic                            abort_i,

  input  logic                            cmd_valid_i,
  output logic                            cmd_ready_o,
  input  nmsa_pkg::cmd_t                  cmd_i,

  input  logic                            c2s_avail_i,
  output logic                            c2s_pop_o,
  output logic                            s2c_push_o,

  output logic                            epi_rd_en_o,
  output logic [$clog2(EpiEntries)-1:0]   epi_rd_addr_o,
  input  logic [Cols*96-1:0]              epi_rd_data_i,
  output logic                            acc_rd_en_o,
  output logic [$clog2(AccEntries)-1:0]   acc_rd_addr_o,
  input  logic [Cols*AccW-1:0]            acc_rd_data_i,

  // DMA write request, data and completion.
  output logic                            req_valid_o,
  input  logic                            req_ready_i,
  output logic [63:0]                     req_addr_o,
  output logic [15:0]                     req_row_bytes_o,
  output logic [15:0]                     req_rows_o,
  output logic [63:0]                     req_stride_o,
  output logic                            wr_valid_o,
  input  logic                            wr_ready_i,
  output logic [AxiDataW-1:0]             wr_data_o,
  input  logic                            cpl_valid_i,
  input  logic [1:0]                      cpl_resp_i,

  output logic                            err_valid_o,
  output logic [1:0]                      err_resp_o,
  output logic [31:0]                     err_index_o,
  output logic                            busy_o
);

  localparam int unsigned EpiAW    = $clog2(EpiEntries);
  localparam int unsigned AccAW    = $clog2(AccEntries);
  localparam int unsigned BeatB    = AxiDataW / 8;
  // Beats of one output row; a narrow INT8 row (Cols < 8 bytes) is one beat.
  localparam int unsigned Int8Beats  = (Cols + BeatB - 1) / BeatB;
  localparam int unsigned Int32Beats = (Cols * 4 + BeatB - 1) / BeatB;
  localparam int unsigned PadBits    = Int32Beats * AxiDataW;

  typedef enum logic [2:0] {
    StIdle,
    StParams,     // epilogue parameters being read
    StRequest,    // DMA request
    StRowRead,    // accumulator row being read
    StSend,       // row beats to the DMA
    StWait        // all rows sent: wait for the write responses
  } state_e;

  state_e           state_d, state_q;
  nmsa_pkg::cmd_t   cmd_d, cmd_q;
  logic [Cols*96-1:0] params_d, params_q;
  logic [15:0]      rows_left_d, rows_left_q;
  logic [AccAW-1:0] acc_row_d, acc_row_q;
  logic [PadBits-1:0] row_buf_d, row_buf_q;
  logic [7:0]       beat_d, beat_q;
  logic             params_ready_d, params_ready_q;   // epi read issued last cycle
  logic             row_ready_d, row_ready_q;         // acc read issued last cycle
  logic [Cols*32-1:0] epi_out;
  logic [7:0]       beats_per_row;
  logic             accept;

  assign beats_per_row = cmd_q.flag_b ? 8'(Int32Beats) : 8'(Int8Beats);
  assign accept = (state_q == StIdle) && cmd_valid_i && !abort_i &&
                  (!cmd_i.pop_prev || c2s_avail_i);
  assign cmd_ready_o = accept;
  assign c2s_pop_o   = accept && cmd_i.pop_prev;

  nmsa_epilogue #(
    .Cols (Cols),
    .AccW (AccW)
  ) u_epilogue (
    .acc_i    (acc_rd_data_i),
    .params_i (params_q),
    .relu_i   (cmd_q.flag_a),
    .int32_i  (cmd_q.flag_b),
    .out_o    (epi_out)
  );

  assign epi_rd_en_o   = accept;
  assign epi_rd_addr_o = cmd_i.size[EpiAW-1:0];
  assign acc_rd_addr_o = acc_row_q;

  assign req_valid_o     = state_q == StRequest;
  assign req_addr_o      = cmd_q.word1;
  assign req_row_bytes_o = cmd_q.flag_b ? 16'(Cols * 4) : 16'(Cols);
  assign req_rows_o      = cmd_q.count;
  assign req_stride_o    = cmd_q.word2;

  assign wr_valid_o = state_q == StSend && !row_ready_q;
  assign wr_data_o  = row_buf_q[beat_q * AxiDataW +: AxiDataW];

  always_comb begin
    state_d        = state_q;
    cmd_d          = cmd_q;
    params_d       = params_q;
    rows_left_d    = rows_left_q;
    acc_row_d      = acc_row_q;
    row_buf_d      = row_buf_q;
    beat_d         = beat_q;
    params_ready_d = 1'b0;
    row_ready_d    = 1'b0;
    acc_rd_en_o    = 1'b0;

    unique case (state_q)
      StIdle: begin
        if (accept) begin
          cmd_d          = cmd_i;
          rows_left_d    = cmd_i.count;
          acc_row_d      = cmd_i.addr[AccAW-1:0];
          params_ready_d = 1'b1;
          state_d        = StParams;
        end
      end
      StParams: begin
        if (params_ready_q) begin
          params_d = epi_rd_data_i;
          state_d  = StRequest;
        end
      end
      StRequest: begin
        if (req_ready_i) state_d = StRowRead;
      end
      StRowRead: begin
        acc_rd_en_o = 1'b1;
        row_ready_d = 1'b1;
        beat_d      = '0;
        state_d     = StSend;
      end
      StSend: begin
        if (row_ready_q) begin
          row_buf_d = PadBits'(epi_out);
        end else if (wr_ready_i) begin
          beat_d = beat_q + 1'b1;
          if (beat_q == beats_per_row - 1'b1) begin
            rows_left_d = rows_left_q - 1'b1;
            acc_row_d   = acc_row_q + 1'b1;
            state_d     = rows_left_q == 16'd1 ? StWait : StRowRead;
          end
        end
      end
      StWait: begin
        if (cpl_valid_i) state_d = StIdle;
      end
      default: state_d = StIdle;
    endcase

    // On an error elsewhere, stop at once unless the DMA already holds our request: then its
    // beats must still be delivered so that the AXI bursts complete.
    if (abort_i && (state_q == StParams || state_q == StIdle)) begin
      state_d = StIdle;
    end
  end

  assign err_valid_o = state_q == StWait && cpl_valid_i && cpl_resp_i != 2'b00;
  assign err_resp_o  = cpl_resp_i;
  assign err_index_o = cmd_q.index;
  assign s2c_push_o  = state_q == StWait && cpl_valid_i && cpl_resp_i == 2'b00 && cmd_q.push_prev;
  assign busy_o      = state_q != StIdle;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q        <= StIdle;
      params_ready_q <= 1'b0;
      row_ready_q    <= 1'b0;
    end else if (clear_i) begin
      state_q        <= StIdle;
      params_ready_q <= 1'b0;
      row_ready_q    <= 1'b0;
    end else begin
      state_q        <= state_d;
      params_ready_q <= params_ready_d;
      row_ready_q    <= row_ready_d;
    end
  end

  always_ff @(posedge clk_i) begin
    cmd_q       <= cmd_d;
    params_q    <= params_d;
    rows_left_q <= rows_left_d;
    acc_row_q   <= acc_row_d;
    row_buf_q   <= row_buf_d;
    beat_q      <= beat_d;
  end

endmodule

`default_nettype wire
