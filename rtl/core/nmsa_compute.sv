// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Compute engine: runs COMPUTE commands (docs/isa.md) on the systolic array.
//
// Three stages, so that the array streams back to back across tiles:
//   weight loader  takes the next COMPUTE once its tokens are there and its bank is free, and
//                  copies the tile's Rows weight records into the array's idle bank (read,
//                  register, load: one record per cycle);
//   streamer       feeds the loaded tile's activation vectors, one per cycle (read, register the
//                  entry, register its lanes, enter the array), and moves on to the next loaded
//                  tile in the very next cycle;
//   accumulator    adds each result row to (or writes it into) the accumulator SRAM (read,
//                  register, add, write), and gives the tile's tokens once its last row is there.
// Every stage boundary is a register, so no path runs from a scratchpad's output into the array
// or from the accumulator SRAM's output into its input. A beat that accumulates into a row whose
// previous result is still in the read-add-write pipeline waits (docs/architecture.md): within a
// tile of fewer than AccHazard beats, or when an ACCUMULATE tile's first rows are among the last
// AccHazard - 1 rows the tile before it issued.
// Activation and weight scratchpads and the accumulator SRAM live in the top; this block drives
// their ports.
`default_nettype none

module nmsa_compute #(
  parameter int unsigned Rows       = 8,
  parameter int unsigned Cols       = 8,
  parameter int unsigned N          = nmsa_pkg::DefaultN,
  parameter int unsigned M          = nmsa_pkg::DefaultM,
  parameter int unsigned DataW      = nmsa_pkg::DefaultDataW,
  parameter int unsigned AccW       = nmsa_pkg::DefaultAccW,
  parameter bit          Sparse     = 1'b1,
  parameter int unsigned ActEntries = 2048,
  parameter int unsigned WgtRecords = 256,
  parameter int unsigned AccEntries = 2048,
  parameter int unsigned RecordW    = 192,  // bits of one weight record
  parameter bit          BlockRamFifos = 1'b0  // the accumulate FIFO in block RAM (nmsa_fifo)
) (
  input  logic                              clk_i,
  input  logic                              rst_ni,
  input  logic                              clear_i,   // soft reset: drop every command
  input  logic                              abort_i,   // error: issue nothing new

  input  logic                              cmd_valid_i,
  output logic                              cmd_ready_o,
  input  nmsa_pkg::cmd_t                    cmd_i,

  // Dependency tokens.
  input  logic                              l2c_avail_i,
  output logic                              l2c_pop_o,
  input  logic                              s2c_avail_i,
  output logic                              s2c_pop_o,
  output logic                              c2l_push_o,
  output logic                              c2s_push_o,

  // Scratchpad and accumulator ports (synchronous reads: data one cycle after the address).
  output logic                              wgt_rd_en_o,
  output logic [$clog2(WgtRecords)-1:0]     wgt_rd_addr_o,
  input  logic [RecordW-1:0]                wgt_rd_data_i,
  output logic                              act_rd_en_o,
  output logic [$clog2(ActEntries)-1:0]     act_rd_addr_o,
  input  logic [Rows*(Sparse ? M : N)*DataW-1:0] act_rd_data_i,
  output logic                              acc_rd_en_o,
  output logic [$clog2(AccEntries)-1:0]     acc_rd_addr_o,
  input  logic [Cols*AccW-1:0]              acc_rd_data_i,
  output logic                              acc_wr_en_o,
  output logic [$clog2(AccEntries)-1:0]     acc_wr_addr_o,
  output logic [Cols*AccW-1:0]              acc_wr_data_o,

  // Errors (one-cycle pulses; the top keeps the first) and statistics.
  output logic                              err_valid_o,
  output logic [31:0]                       err_index_o,
  output logic                              busy_o,
  output logic                              stat_beat_o,        // a vector enters the array
  output logic                              stat_beat_dense_o,  // ... in dense mode
  output logic                              stat_tile_sparse_o,
  output logic                              stat_tile_dense_o,
  output logic [Cols-1:0]                   stat_illegal_o,     // illegal codes of the loaded row
  output logic                              stat_dma_stall_o
);

  localparam int unsigned IdxW      = $clog2(M);
  localparam int unsigned Lanes     = Sparse ? M : N;
  localparam int unsigned ActW      = Rows * Lanes * DataW;
  localparam int unsigned ValW      = Cols * N * DataW;
  localparam int unsigned MetaW     = Cols * N * IdxW;
  localparam int unsigned RowW      = Rows > 1 ? $clog2(Rows) : 1;
  localparam int unsigned ActAW     = $clog2(ActEntries);
  localparam int unsigned WgtAW     = $clog2(WgtRecords);
  localparam int unsigned AccAW     = $clog2(AccEntries);
  localparam int unsigned Latency   = Rows + Cols + nmsa_pkg::PeLatency - 2;
  // Results in flight: the array's latency plus the read, entry and input stages, rounded up to
  // a power of two.
  localparam int unsigned InfoDepth = 1 << $clog2(Latency + 5);
  // Cycles between a beat's issue and the accumulator write of its result's read-add-write; a
  // beat that accumulates into a row issued fewer cycles ago waits.
  localparam int unsigned AccHazard = nmsa_pkg::AccHazardCycles;

  if (AccHazard < 4) begin : g_bad_hazard
    $error("nmsa_compute: nmsa_pkg::AccHazardCycles must be at least 4");
  end
  if (ValW + (Sparse ? MetaW : 0) > RecordW) begin : g_bad_record
    $error("nmsa_compute: RecordW too small for one PE row of values and metadata");
  end

  // ---------------------------------------------------------------------------------------------
  // Array
  // ---------------------------------------------------------------------------------------------
  logic                  wload_valid;
  logic [RowW-1:0]       wload_row;
  logic                  wload_bank;
  logic                  wload_dense;
  logic [MetaW-1:0]      wload_meta;
  logic [Cols-1:0]       wload_illegal;
  logic [1:0]            bank_busy;
  logic                  in_valid;
  logic                  in_bank;
  logic [ActW-1:0]       in_act;
  logic                  out_valid;
  logic                  out_err;
  logic [Cols*AccW-1:0]  out_psum;

  nmsa_array #(
    .Rows   (Rows),
    .Cols   (Cols),
    .N      (N),
    .M      (M),
    .DataW  (DataW),
    .AccW   (AccW),
    .Sparse (Sparse)
  ) u_array (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .wload_valid_i   (wload_valid),
    .wload_row_i     (wload_row),
    .wload_bank_i    (wload_bank),
    .wload_dense_i   (wload_dense),
    .wload_val_i     (rec_q[ValW-1:0]),
    .wload_meta_i    (wload_meta),
    .wload_illegal_o (wload_illegal),
    .bank_busy_o     (bank_busy),
    .in_valid_i      (in_valid),
    .in_bank_i       (in_bank),
    .in_act_i        (in_act),
    .out_valid_o     (out_valid),
    .out_err_o       (out_err),
    .out_psum_o      (out_psum)
  );

  // ---------------------------------------------------------------------------------------------
  // Weight loader: read record i, register it, load it into PE row i of the idle bank.
  // ---------------------------------------------------------------------------------------------
  nmsa_pkg::cmd_t  wl_cmd_d, wl_cmd_q;
  logic            wl_busy_d, wl_busy_q;         // reading records of wl_cmd_q
  logic [RowW:0]   wl_row_d, wl_row_q;           // next record to read
  logic            wl_bank_d, wl_bank_q;         // bank the next tile loads into
  logic            rd_valid_q;                   // a record read last cycle
  logic [RowW-1:0] rd_row_q;
  logic            rec_valid_q;                  // a registered record: load it this cycle
  logic [RowW-1:0] rec_row_q;
  logic [RecordW-1:0] rec_q;

  // Handoff to the streamer: a tile whose weights are in.
  nmsa_pkg::cmd_t  next_cmd_d, next_cmd_q;
  logic            next_valid_d, next_valid_q;
  logic            next_bank_d, next_bank_q;

  // Streamer state (declared here: the loader must know which bank it uses).
  logic            st_valid_d, st_valid_q;
  logic            st_bank_d, st_bank_q;
  logic            pend_valid_q;                 // read issued last cycle
  logic            pend_bank_q, pend_dense_q;
  logic [1:0]      pend_part_q;
  logic            ent_valid_q;                  // the read entry, registered
  logic            ent_bank_q, ent_dense_q;
  logic [1:0]      ent_part_q;
  logic [ActW-1:0] ent_data_q;
  logic            in_valid_q, in_bank_q, in_dense_q;   // registered beat: enters the array now
  logic [ActW-1:0] in_act_q;

  logic [1:0]      bank_in_use;
  logic            tokens_ok, bad_mode, accept, last_record_loaded;

  for (genvar b = 0; b < 2; b++) begin : g_bank_use
    assign bank_in_use[b] = bank_busy[b] |
                            (in_valid_q & (in_bank_q == 1'(b))) |
                            (ent_valid_q & (ent_bank_q == 1'(b))) |
                            (pend_valid_q & (pend_bank_q == 1'(b))) |
                            (st_valid_q & (st_bank_q == 1'(b)));
  end

  // A sparse COMPUTE on the dense-only array is refused by the command processor; this only
  // keeps such a command from ever reaching the array.
  assign bad_mode    = !Sparse && !cmd_i.flag_a;
  assign tokens_ok   = (!cmd_i.pop_prev || l2c_avail_i) && (!cmd_i.pop_next || s2c_avail_i);
  assign accept      = cmd_valid_i && !wl_busy_q && !rd_valid_q && !rec_valid_q &&
                       !next_valid_q && !abort_i && !bad_mode && tokens_ok &&
                       !bank_in_use[wl_bank_q];
  assign cmd_ready_o = accept;
  assign l2c_pop_o   = accept && cmd_i.pop_prev;
  assign s2c_pop_o   = accept && cmd_i.pop_next;
  assign last_record_loaded = rec_valid_q && (rec_row_q == RowW'(Rows - 1));

  always_comb begin
    wl_cmd_d      = wl_cmd_q;
    wl_busy_d     = wl_busy_q;
    wl_row_d      = wl_row_q;
    wl_bank_d     = wl_bank_q;
    wgt_rd_en_o   = 1'b0;
    wgt_rd_addr_o = wl_cmd_q.addr[WgtAW-1:0] + WgtAW'(wl_row_q);

    if (accept) begin
      wl_cmd_d  = cmd_i;
      wl_busy_d = 1'b1;
      wl_row_d  = '0;
    end else if (wl_busy_q) begin
      wgt_rd_en_o = 1'b1;
      wl_row_d    = wl_row_q + 1'b1;
      if (wl_row_q == (RowW+1)'(Rows - 1)) begin
        wl_busy_d = 1'b0;
      end
    end
    if (last_record_loaded) begin
      wl_bank_d = ~wl_bank_q;
    end
  end

  assign wload_valid  = rec_valid_q;
  assign wload_row    = rec_row_q;
  assign wload_bank   = wl_bank_q;
  assign wload_dense  = wl_cmd_q.flag_a;

  // A record holds a PE row's values, then (with Sparse) their metadata (docs/isa.md).
  if (Sparse) begin : g_meta
    assign wload_meta = rec_q[ValW +: MetaW];
  end else begin : g_no_meta
    assign wload_meta = '0;
  end

  // ---------------------------------------------------------------------------------------------
  // Streamer: issue a read, register the entry as the scratchpad gives it, register its lanes (a
  // dense beat is part `part` of it), enter. The entry register keeps the block RAM's output
  // apart from the lane select and the array's input wiring.
  // ---------------------------------------------------------------------------------------------
  nmsa_pkg::cmd_t   st_cmd_d, st_cmd_q;
  logic [ActAW-1:0] st_act_d, st_act_q;      // next activation entry
  logic [AccAW-1:0] st_acc_d, st_acc_q;      // its accumulator row
  logic [15:0]      st_left_d, st_left_q;    // beats still to issue

  // What the accumulator stage needs to know about each result row, in issue order.
  typedef struct packed {
    logic [31:0]      index;
    logic [AccAW-1:0] acc_row;
    logic             accumulate;
    logic             last;
    logic             push_prev;
    logic             push_next;
  } info_t;

  localparam int unsigned InfoW = 32 + AccAW + 4;  // $bits(info_t), for Yosys 0.23
  info_t info_in, info_out;
  logic  info_push, info_pop, info_valid, info_ready;
  logic [$clog2(InfoDepth):0] info_count;
  logic  hazard, issue, issue_last, take_next;

  // Rows issued in the last AccHazard - 1 cycles: a beat that accumulates into one of them waits.
  // hazard_q is a register, computed for the beat and the rows of the next cycle, so that issue
  // (the read enable of the activation buffer and much else) is one gate away from flops. The
  // next beat is this tile's next row (after an issue), its current row, or the next tile's first
  // row; each is compared with the rows from registers, and the handshakes only select.
  logic [AccHazard-3:0] hist_valid_q;
  logic [AccAW-1:0]     hist_row_q [AccHazard-2];
  logic                 hazard_d, hazard_q;
  logic [AccAW-1:0]     next_first_row;
  logic                 hit_stay, hit_issue, hit_next;

  assign next_first_row = next_cmd_q.word1[32 +: AccAW];

  always_comb begin
    // The history the next cycle sees: this cycle's row (if issued), then hist_row_q.
    hit_stay  = 1'b0;
    hit_issue = 1'b0;
    hit_next  = issue && st_acc_q == next_first_row;
    for (int unsigned h = 0; h < AccHazard - 2; h++) begin
      if (hist_valid_q[h] && hist_row_q[h] == st_acc_q) hit_stay = 1'b1;
      if (hist_valid_q[h] && hist_row_q[h] == st_acc_q + 1'b1) hit_issue = 1'b1;
      if (hist_valid_q[h] && hist_row_q[h] == next_first_row) hit_next = 1'b1;
    end
    // The row just issued is st_acc_q, never st_acc_q + 1.
    if (take_next) begin
      hazard_d = next_cmd_q.flag_b && hit_next;
    end else if (issue) begin
      hazard_d = st_cmd_q.flag_b && hit_issue;
    end else begin
      hazard_d = st_cmd_q.flag_b && hit_stay;
    end
  end

  assign hazard     = hazard_q;
  assign issue      = st_valid_q && !abort_i && !hazard;
  assign issue_last = issue && (st_left_q == 16'd1);
  assign take_next  = next_valid_q && (!st_valid_q || issue_last) && !abort_i;

  always_comb begin
    next_cmd_d   = next_cmd_q;
    next_valid_d = next_valid_q;
    next_bank_d  = next_bank_q;
    st_cmd_d     = st_cmd_q;
    st_valid_d   = st_valid_q;
    st_bank_d    = st_bank_q;
    st_act_d     = st_act_q;
    st_acc_d     = st_acc_q;
    st_left_d    = st_left_q;

    if (last_record_loaded) begin
      next_cmd_d   = wl_cmd_q;
      next_valid_d = 1'b1;
      next_bank_d  = wl_bank_q;
    end

    if (issue) begin
      st_act_d  = st_act_q + st_cmd_q.word1[16 +: ActAW];
      st_acc_d  = st_acc_q + 1'b1;
      st_left_d = st_left_q - 1'b1;
      if (issue_last) st_valid_d = 1'b0;
    end

    if (take_next) begin
      next_valid_d = 1'b0;
      st_cmd_d     = next_cmd_q;
      st_valid_d   = 1'b1;
      st_bank_d    = next_bank_q;
      st_act_d     = next_cmd_q.word1[0 +: ActAW];
      st_acc_d     = next_cmd_q.word1[32 +: AccAW];
      st_left_d    = next_cmd_q.count;
    end

    if (abort_i) begin
      st_valid_d   = 1'b0;
      next_valid_d = 1'b0;
    end
  end

  assign act_rd_en_o   = issue;
  assign act_rd_addr_o = st_act_q;

  assign info_push          = issue;
  assign info_in.index      = st_cmd_q.index;
  assign info_in.acc_row    = st_acc_q;
  assign info_in.accumulate = st_cmd_q.flag_b;
  assign info_in.last       = st_left_q == 16'd1;
  assign info_in.push_prev  = st_cmd_q.push_prev;
  assign info_in.push_next  = st_cmd_q.push_next;

  // Activation lanes of the registered entry: sparse beats take it as it is; a dense beat on the sparse
  // array is part `part` of it (Rows*N bytes), spread so that PE row r sees its N positions in
  // lanes r*M .. r*M+N-1. The dense-only array takes every entry as it is.
  logic [ActW-1:0] entry_lanes;

  if (Sparse) begin : g_dense_spread
    always_comb begin
      entry_lanes = '0;
      if (ent_dense_q) begin
        for (int unsigned r = 0; r < Rows; r++) begin
          for (int unsigned n = 0; n < N; n++) begin
            entry_lanes[(r*M + n)*DataW +: DataW] =
                ent_data_q[(32'(ent_part_q)*Rows*N + r*N + n)*DataW +: DataW];
          end
        end
      end else begin
        entry_lanes = ent_data_q;
      end
    end
  end else begin : g_entry
    assign entry_lanes = ent_data_q;
    logic unused;
    assign unused = ^ent_part_q;
  end

  assign in_valid = in_valid_q;
  assign in_bank  = in_bank_q;
  assign in_act   = in_act_q;

  // ---------------------------------------------------------------------------------------------
  // Accumulator read-add-write: read (R), register (D), add (A), write (W).
  // ---------------------------------------------------------------------------------------------
  nmsa_fifo #(
    .Width    (InfoW),
    .Depth    (InfoDepth),
    .BlockRam (BlockRamFifos)
  ) u_info_fifo (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .flush_i     (clear_i),
    .in_valid_i  (info_push),
    .in_ready_o  (info_ready),
    .in_data_i   (info_in),
    .out_valid_o (info_valid),
    .out_ready_i (info_pop),
    .out_data_o  (info_out),
    .count_o     (info_count)
  );

  assign info_pop = out_valid | out_err;

  logic                 d_valid_q, a_valid_q, w_valid_q;
  info_t                d_info_q, a_info_q, w_info_q;
  logic [Cols*AccW-1:0] d_psum_q, a_psum_q, a_old_q, w_data_q;
  logic [Cols*AccW-1:0] sum;

  assign acc_rd_en_o   = out_valid;
  assign acc_rd_addr_o = info_out.acc_row;

  always_comb begin
    for (int unsigned c = 0; c < Cols; c++) begin
      sum[c*AccW +: AccW] = a_psum_q[c*AccW +: AccW] +
                            (a_info_q.accumulate ? a_old_q[c*AccW +: AccW] : '0);
    end
  end

  assign acc_wr_en_o   = w_valid_q;
  assign acc_wr_addr_o = w_info_q.acc_row;
  assign acc_wr_data_o = w_data_q;
  assign c2l_push_o    = w_valid_q && w_info_q.last && w_info_q.push_prev;
  assign c2s_push_o    = w_valid_q && w_info_q.last && w_info_q.push_next;

  // ---------------------------------------------------------------------------------------------
  // Errors and statistics
  // ---------------------------------------------------------------------------------------------
  assign err_valid_o = (|wload_illegal) | out_err;
  assign err_index_o = (|wload_illegal) ? wl_cmd_q.index : info_out.index;

  assign busy_o = wl_busy_q | rd_valid_q | rec_valid_q | next_valid_q | st_valid_q |
                  pend_valid_q | ent_valid_q | in_valid_q | info_valid | d_valid_q |
                  a_valid_q | w_valid_q;

  assign stat_beat_o        = in_valid;
  assign stat_beat_dense_o  = in_valid & in_dense_q;
  assign stat_tile_sparse_o = accept & ~cmd_i.flag_a;
  assign stat_tile_dense_o  = accept & cmd_i.flag_a;
  assign stat_illegal_o     = wload_illegal;
  assign stat_dma_stall_o   = cmd_valid_i && cmd_i.pop_prev && !l2c_avail_i && !wl_busy_q &&
                              !rd_valid_q && !rec_valid_q && !next_valid_q && !st_valid_q &&
                              !pend_valid_q && !ent_valid_q && !in_valid_q && !abort_i;

  // The info FIFO holds more entries than can ever be in flight (Latency + read stages), so it is
  // never full; record padding and the index of a finished row are not needed.
  logic unused;
  assign unused = ^{info_ready, info_count, w_info_q.index, w_info_q.accumulate, rec_q};

  // ---------------------------------------------------------------------------------------------
  // Internal rules (simulation with --assert)
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  logic check_q;  // high from the first clock edge after reset
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      check_q <= 1'b0;
    end else begin
      check_q <= 1'b1;
    end
  end

  always @(posedge clk_i) begin
    if (check_q && !clear_i) begin
      // Every result row has its bookkeeping entry, and the FIFO is deep enough for all rows
      // in flight.
      if (info_push) begin
        assert (info_ready);
      end
      if (info_pop) begin
        assert (info_valid);
      end
      // The streamer never feeds a bank that is loading.
      if (wload_valid && in_valid) begin
        assert (in_bank != wload_bank);
      end
      // A read never misses a write still in the read-add-write pipeline.
      if (out_valid && info_out.accumulate) begin
        assert (!(d_valid_q && d_info_q.acc_row == info_out.acc_row));
        assert (!(a_valid_q && a_info_q.acc_row == info_out.acc_row));
        assert (!(w_valid_q && w_info_q.acc_row == info_out.acc_row));
      end
    end
  end
`endif

  // ---------------------------------------------------------------------------------------------
  // Registers
  // ---------------------------------------------------------------------------------------------
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wl_busy_q    <= 1'b0;
      wl_row_q     <= '0;
      wl_bank_q    <= 1'b0;
      rd_valid_q   <= 1'b0;
      rec_valid_q  <= 1'b0;
      next_valid_q <= 1'b0;
      next_bank_q  <= 1'b0;
      st_valid_q   <= 1'b0;
      st_bank_q    <= 1'b0;
      st_left_q    <= '0;
      pend_valid_q <= 1'b0;
      pend_bank_q  <= 1'b0;
      pend_dense_q <= 1'b0;
      pend_part_q  <= '0;
      ent_valid_q  <= 1'b0;
      ent_bank_q   <= 1'b0;
      ent_dense_q  <= 1'b0;
      ent_part_q   <= '0;
      in_valid_q   <= 1'b0;
      in_bank_q    <= 1'b0;
      in_dense_q   <= 1'b0;
      hist_valid_q <= '0;
      hazard_q     <= 1'b0;
      d_valid_q    <= 1'b0;
      a_valid_q    <= 1'b0;
      w_valid_q    <= 1'b0;
    end else if (clear_i) begin
      wl_busy_q    <= 1'b0;
      wl_row_q     <= '0;
      rd_valid_q   <= 1'b0;
      rec_valid_q  <= 1'b0;
      next_valid_q <= 1'b0;
      st_valid_q   <= 1'b0;
      st_left_q    <= '0;
      pend_valid_q <= 1'b0;
      ent_valid_q  <= 1'b0;
      in_valid_q   <= 1'b0;
      hist_valid_q <= '0;
      hazard_q     <= 1'b0;
      d_valid_q    <= 1'b0;
      a_valid_q    <= 1'b0;
      w_valid_q    <= 1'b0;
    end else begin
      wl_busy_q    <= wl_busy_d;
      wl_row_q     <= wl_row_d;
      wl_bank_q    <= wl_bank_d;
      rd_valid_q   <= wgt_rd_en_o;
      rec_valid_q  <= rd_valid_q;
      next_valid_q <= next_valid_d;
      next_bank_q  <= next_bank_d;
      st_valid_q   <= st_valid_d;
      st_bank_q    <= st_bank_d;
      st_left_q    <= st_left_d;
      pend_valid_q <= issue;
      pend_bank_q  <= st_bank_q;
      pend_dense_q <= st_cmd_q.flag_a;
      pend_part_q  <= st_cmd_q.part;
      ent_valid_q  <= pend_valid_q;
      ent_bank_q   <= pend_bank_q;
      ent_dense_q  <= pend_dense_q;
      ent_part_q   <= pend_part_q;
      in_valid_q   <= ent_valid_q;
      in_bank_q    <= ent_bank_q;
      in_dense_q   <= ent_dense_q;
      hist_valid_q <= {hist_valid_q[AccHazard-4:0], issue};
      hazard_q     <= hazard_d;
      d_valid_q    <= out_valid;
      a_valid_q    <= d_valid_q;
      w_valid_q    <= a_valid_q;
    end
  end

  // Payload registers, qualified by the valid bits above.
  always_ff @(posedge clk_i) begin
    wl_cmd_q   <= wl_cmd_d;
    rd_row_q   <= wl_row_q[RowW-1:0];
    rec_row_q  <= rd_row_q;
    rec_q      <= wgt_rd_data_i;
    next_cmd_q <= next_cmd_d;
    st_cmd_q   <= st_cmd_d;
    st_act_q   <= st_act_d;
    st_acc_q   <= st_acc_d;
    ent_data_q <= act_rd_data_i;
    in_act_q   <= entry_lanes;
    hist_row_q[0] <= st_acc_q;
    for (int unsigned h = 1; h < AccHazard - 2; h++) begin
      hist_row_q[h] <= hist_row_q[h-1];
    end
    d_info_q   <= info_out;
    d_psum_q   <= out_psum;
    a_info_q   <= d_info_q;
    a_psum_q   <= d_psum_q;
    a_old_q    <= acc_rd_data_i;
    w_info_q   <= a_info_q;
    w_data_q   <= sum;
  end

endmodule

`default_nettype wire
