// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Store engine: runs STORE commands (docs/isa.md). After its token, a STORE hands its write
// request to the DMA; then every accumulator row streams through the epilogue into a FIFO of
// finished rows, whose beats go to the DMA; the command finishes when the DMA reports all write
// responses.
//
// The epilogue takes EpiLanes output channels per cycle, so a row passes as Groups = Cols /
// EpiLanes groups in consecutive cycles, with the epilogue parameters of each group read from the
// epilogue scratchpad just in time (the scratchpad holds them as Groups sub-entries per entry,
// docs/isa.md). A row's journey, from its accumulator read in cycle t:
//   t+g        parameters of group g read
//   t+1        the row, at the accumulator port's output, registered whole (row_data_q): the
//              accumulator's block RAMs spread across the die, so their output drives only a
//              register; the row stays there until a cycle after the next row read
//   t+1+g      group g's parameters registered
//   t+2+g      group g, selected from row_data_q, enters the epilogue; its results L =
//              nmsa_pkg::EpiLatency cycles later
//   t+2+Groups+L  the finished row is written into the FIFO; its beats go out from t+3+Groups+L
// Rows are read every Groups cycles as long as the FIFO has room for every row in flight
// (RowSlots credits), so a row never waits inside the pipeline.
`default_nettype none

module nmsa_store #(
  parameter int unsigned Cols       = 8,
  parameter int unsigned AccW       = 32,
  parameter int unsigned AccEntries = 2048,
  parameter int unsigned EpiEntries = 64,
  parameter int unsigned EpiLanes   = 4,
  parameter int unsigned AxiDataW   = 64,
  // Finished rows the FIFO holds: enough credits for every row in flight between its read and
  // its last beat at full rate (nmsa_top derives it and reports it in CAP_PIPELINE).
  parameter int unsigned RowSlots   = 8,
  parameter bit          BlockRamFifos = 1'b0  // the row FIFO in block RAM (nmsa_fifo)
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

  // Epilogue scratchpad: sub-entry e * Groups + g holds the parameters of group g of entry e.
  output logic                            epi_rd_en_o,
  output logic [$clog2(EpiEntries*Cols/EpiLanes)-1:0] epi_rd_addr_o,
  input  logic [EpiLanes*nmsa_pkg::EpiParamBits-1:0]  epi_rd_data_i,
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

  localparam int unsigned Groups     = Cols / EpiLanes;
  localparam int unsigned GroupW     = Groups > 1 ? $clog2(Groups) : 1;
  localparam int unsigned EpiAW      = $clog2(EpiEntries * Groups);
  localparam int unsigned AccAW      = $clog2(AccEntries);
  localparam int unsigned ParamW     = EpiLanes * nmsa_pkg::EpiParamBits;
  localparam int unsigned BeatB      = AxiDataW / 8;
  localparam int unsigned RowW       = Cols * 32;   // an INT32 row; an INT8 row uses its low bytes
  // Beats of one output row; a narrow INT8 row (Cols < 8 bytes) is one beat.
  localparam int unsigned Int8Beats  = (Cols + BeatB - 1) / BeatB;
  localparam int unsigned Int32Beats = (Cols * 4 + BeatB - 1) / BeatB;
  localparam int unsigned BeatIdxW   = Int32Beats > 1 ? $clog2(Int32Beats) : 1;
  localparam int unsigned SlotW      = $clog2(RowSlots + 1);

  if (Groups * EpiLanes != Cols || (1 << GroupW) < Groups ||
      (Groups > 1 && (1 << GroupW) != Groups)) begin : g_bad_lanes
    $error("nmsa_store: EpiLanes must divide Cols into a power-of-two number of groups");
  end

  typedef enum logic [1:0] {
    StIdle,
    StRequest,    // DMA request
    StRun,        // rows streaming
    StWait        // all beats sent: wait for the write responses
  } state_e;

  state_e           state_d, state_q;
  nmsa_pkg::cmd_t   cmd_q;
  logic             accept, run;

  assign accept = (state_q == StIdle) && cmd_valid_i && !abort_i &&
                  (!cmd_i.pop_prev || c2s_avail_i);
  assign cmd_ready_o = accept;
  assign c2s_pop_o   = accept && cmd_i.pop_prev;
  assign run         = state_q == StRun;

  assign req_valid_o     = state_q == StRequest && !abort_i;
  assign req_addr_o      = cmd_q.word1;
  assign req_row_bytes_o = cmd_q.flag_b ? 16'(Cols * 4) : 16'(Cols);
  assign req_rows_o      = cmd_q.count;
  assign req_stride_o    = cmd_q.word2;

  // ---------------------------------------------------------------------------------------------
  // Row reader: one accumulator row every Groups cycles while a credit is free.
  // ---------------------------------------------------------------------------------------------
  logic [15:0]      to_read_q;        // rows not yet read
  logic [AccAW-1:0] acc_row_q;
  logic [GroupW-1:0] gap_q;           // cycles since the last read, up to Groups - 1
  logic [SlotW-1:0] credits_q;        // rows that may still be read (FIFO room minus in flight)
  logic             read, row_sent;

  assign read          = run && to_read_q != '0 && credits_q != '0 &&
                         (Groups == 1 || gap_q == GroupW'(Groups - 1));
  assign acc_rd_en_o   = read;
  assign acc_rd_addr_o = acc_row_q;

  // ---------------------------------------------------------------------------------------------
  // Groups: group g's parameters are read g cycles after its row and registered as an operand of
  // the epilogue; the row is registered whole a cycle after its read (row_data_q), and group g's
  // accumulators are selected from that register as the epilogue takes them.
  // ---------------------------------------------------------------------------------------------
  logic                     grp_active_q;     // reading the parameters of group grp_q > 0
  logic [GroupW-1:0]        grp_q;
  logic                     sel_valid_q;      // parameters of group sel_grp_q arrive now
  logic [GroupW-1:0]        sel_grp_q, epi_grp;
  logic                     opnd_valid_q;
  logic [GroupW-1:0]        opnd_grp_q;       // the group the epilogue takes now
  logic [Cols*AccW-1:0]     row_data_q;
  logic [EpiLanes*AccW-1:0] group_acc;
  logic [ParamW-1:0]        opnd_params_q;

  assign epi_grp       = read ? '0 : grp_q;
  assign epi_rd_en_o   = read | grp_active_q;
  assign epi_rd_addr_o = EpiAW'(cmd_q.size) * EpiAW'(Groups) + EpiAW'(epi_grp);

  if (Groups > 1) begin : g_group_mux
    assign group_acc = row_data_q[opnd_grp_q * EpiLanes * AccW +: EpiLanes * AccW];
  end else begin : g_one_group
    assign group_acc = row_data_q;
  end

  logic                     epi_valid;
  logic [EpiLanes*32-1:0]   epi_data;

  nmsa_epilogue #(
    .Lanes (EpiLanes),
    .AccW  (AccW)
  ) u_epilogue (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (opnd_valid_q),
    .in_acc_i    (group_acc),
    .in_params_i (opnd_params_q),
    .in_relu_i   (cmd_q.flag_a),
    .in_int32_i  (cmd_q.flag_b),
    .out_valid_o (epi_valid),
    .out_data_o  (epi_data)
  );

  // ---------------------------------------------------------------------------------------------
  // Row assembly: groups shift in from the top, so after Groups of them group 0 is at the bottom.
  // ---------------------------------------------------------------------------------------------
  logic [RowW-1:0]     row32_q;
  logic [Cols*8-1:0]   row8_q;
  logic [GroupW-1:0]   out_grp_q;
  logic                row_done_q;        // a finished row is in row32_q / row8_q
  logic [EpiLanes*8-1:0] group_bytes;

  always_comb begin
    for (int unsigned l = 0; l < EpiLanes; l++) begin
      group_bytes[l*8 +: 8] = epi_data[l*32 +: 8];
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Finished rows, and their beats to the DMA.
  // ---------------------------------------------------------------------------------------------
  logic              fifo_in_ready, fifo_valid;
  logic [RowW-1:0]   fifo_in, fifo_out;
  logic [$clog2(RowSlots):0] fifo_count;
  logic [BeatIdxW-1:0] beat_q;
  logic [15:0]       to_send_q;          // rows whose beats are not all sent
  logic [7:0]        beats_per_row;
  logic              last_beat;

  assign fifo_in = cmd_q.flag_b ? row32_q : RowW'(row8_q);

  nmsa_fifo #(
    .Width    (RowW),
    .Depth    (RowSlots),
    .BlockRam (BlockRamFifos)
  ) u_rows (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .flush_i     (clear_i),
    .in_valid_i  (row_done_q),
    .in_ready_o  (fifo_in_ready),
    .in_data_i   (fifo_in),
    .out_valid_o (fifo_valid),
    .out_ready_i (row_sent),
    .out_data_o  (fifo_out),
    .count_o     (fifo_count)
  );

  assign beats_per_row = cmd_q.flag_b ? 8'(Int32Beats) : 8'(Int8Beats);
  assign wr_valid_o    = fifo_valid;
  assign wr_data_o     = fifo_out[32'(beat_q) * AxiDataW +: AxiDataW];
  assign last_beat     = 8'(beat_q) == beats_per_row - 8'd1;
  assign row_sent      = wr_valid_o && wr_ready_i && last_beat;

  // ---------------------------------------------------------------------------------------------
  // Control
  // ---------------------------------------------------------------------------------------------
  always_comb begin
    state_d = state_q;
    unique case (state_q)
      StIdle:    if (accept) state_d = StRequest;
      StRequest: if (req_ready_i) state_d = StRun;
      StRun:     if (row_sent && to_send_q == 16'd1) state_d = StWait;
      StWait:    if (cpl_valid_i) state_d = StIdle;
      default:   state_d = StIdle;
    endcase
    // On an error elsewhere, stop at once unless the DMA already holds our request: then its
    // beats must still be delivered so that the AXI bursts complete. A request the DMA has not
    // taken is withdrawn (nmsa_top cancels it at the DMA), so no write starts after an error.
    if (abort_i && (state_q == StIdle || state_q == StRequest)) begin
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
      state_q      <= StIdle;
      to_read_q    <= '0;
      to_send_q    <= '0;
      gap_q        <= '0;
      credits_q    <= '0;
      grp_active_q <= 1'b0;
      grp_q        <= '0;
      sel_valid_q  <= 1'b0;
      opnd_valid_q <= 1'b0;
      out_grp_q    <= '0;
      row_done_q   <= 1'b0;
      beat_q       <= '0;
    end else if (clear_i) begin
      state_q      <= StIdle;
      to_read_q    <= '0;
      to_send_q    <= '0;
      gap_q        <= '0;
      credits_q    <= '0;
      grp_active_q <= 1'b0;
      grp_q        <= '0;
      sel_valid_q  <= 1'b0;
      opnd_valid_q <= 1'b0;
      out_grp_q    <= '0;
      row_done_q   <= 1'b0;
      beat_q       <= '0;
    end else begin
      state_q <= state_d;
      if (accept) begin
        to_read_q <= cmd_i.count;
        to_send_q <= cmd_i.count;
        gap_q     <= GroupW'(Groups - 1);
        credits_q <= SlotW'(RowSlots);
      end else begin
        if (read) to_read_q <= to_read_q - 16'd1;
        if (row_sent) to_send_q <= to_send_q - 16'd1;
        gap_q     <= read ? '0 : (gap_q == GroupW'(Groups - 1) ? gap_q : gap_q + 1'b1);
        credits_q <= credits_q - SlotW'(read) + SlotW'(row_sent);
      end
      // Groups 1 .. Groups-1 follow the row read (group 0) in consecutive cycles.
      if (read && Groups > 1) begin
        grp_active_q <= 1'b1;
        grp_q        <= GroupW'(1);
      end else if (grp_active_q && grp_q == GroupW'(Groups - 1)) begin
        grp_active_q <= 1'b0;
      end else if (grp_active_q) begin
        grp_q <= grp_q + 1'b1;
      end
      sel_valid_q  <= epi_rd_en_o;
      opnd_valid_q <= sel_valid_q;
      if (epi_valid) begin
        out_grp_q <= out_grp_q == GroupW'(Groups - 1) ? '0 : out_grp_q + 1'b1;
      end
      row_done_q <= epi_valid && out_grp_q == GroupW'(Groups - 1);
      if (wr_valid_o && wr_ready_i) begin
        beat_q <= last_beat ? '0 : beat_q + 1'b1;
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (accept) cmd_q <= cmd_i;
    if (read) acc_row_q <= acc_row_q + 1'b1;
    if (accept) acc_row_q <= cmd_i.addr[AccAW-1:0];
    row_data_q    <= acc_rd_data_i;
    sel_grp_q     <= epi_grp;
    opnd_grp_q    <= sel_grp_q;
    opnd_params_q <= epi_rd_data_i;
  end

  if (Groups > 1) begin : g_assemble
    always_ff @(posedge clk_i) begin
      if (epi_valid) begin
        row32_q <= {epi_data, row32_q[RowW-1:EpiLanes*32]};
        row8_q  <= {group_bytes, row8_q[Cols*8-1:EpiLanes*8]};
      end
    end
  end else begin : g_whole_row
    always_ff @(posedge clk_i) begin
      if (epi_valid) begin
        row32_q <= epi_data;
        row8_q  <= group_bytes;
      end
    end
  end

`ifndef SYNTHESIS
  logic check_q;  // high from the first clock edge after reset
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      check_q <= 1'b0;
    end else begin
      check_q <= 1'b1;
    end
  end

  // A credit is taken for every row in flight, so a finished row always finds room.
  always @(posedge clk_i) begin
    if (check_q && !clear_i && row_done_q) begin
      assert (fifo_in_ready)
        else $error("nmsa_store: a finished row found the row FIFO full (credits lost)");
    end
  end
`endif

  // The row FIFO never fills (credits); one group needs no select; a STORE uses only some fields
  // of its command.
  logic unused;
  assign unused = ^{fifo_count, fifo_in_ready, opnd_grp_q, cmd_q.opcode, cmd_q.pop_prev,
                    cmd_q.pop_next, cmd_q.push_next, cmd_q.target, cmd_q.part, cmd_q.addr};

endmodule

`default_nettype wire
