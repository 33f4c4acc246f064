// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Weight-stationary N:M systolic array of Rows x Cols nmsa_pe. Row r covers K-positions
// [M*r, M*r+M) of the current K-chunk in sparse mode ([N*r, N*r+N) in dense mode), column c one
// output channel. The boundary is unskewed: one activation vector (Rows*M lanes) enters per
// cycle and, Latency = Rows + Cols + PeLatency - 2 cycles later, one row of Cols partial sums
// leaves. Skewing and deskewing happen inside. The timing and the stream protocol are specified
// in docs/architecture.md.
//
// Stream protocol (valid-only): a beat presented with in_valid_i is always taken; the output
// beat appears exactly Latency cycles later with out_valid_o (or with out_err_o instead, when any
// PE computed it with an illegal metadata code). The consumer must always accept; back-pressure
// is handled by the feeder one level up, which issues a beat only when it has room for the
// result. Beats may have gaps.
//
// Weight loading: one PE row per cycle into the bank that is not computing. The metadata of the
// loaded row is decoded once per column here and broadcast down the column. bank_busy_o[b] is
// high while a beat tagged with bank b may still read bank b in some PE (the first
// Rows + Cols - 1 cycles after it entered); loading bank b is legal only while bank_busy_o[b] is
// low, and the feeder tags no beat with bank b while bank b is loading.
//
// Sparse = 0 builds the dense-only array of the same multipliers: Rows*N lanes, no metadata.
`default_nettype none

module nmsa_array #(
  parameter int unsigned Rows   = 8,
  parameter int unsigned Cols   = 8,
  parameter int unsigned N      = nmsa_pkg::DefaultN,
  parameter int unsigned M      = nmsa_pkg::DefaultM,
  parameter int unsigned DataW  = nmsa_pkg::DefaultDataW,
  parameter int unsigned AccW   = nmsa_pkg::DefaultAccW,
  parameter bit          Sparse = 1'b1
) (
  input  logic                              clk_i,
  input  logic                              rst_ni,

  // Weight load: one PE row (all columns) per cycle.
  input  logic                              wload_valid_i,
  input  logic [(Rows > 1 ? $clog2(Rows) : 1)-1:0] wload_row_i,
  input  logic                              wload_bank_i,
  input  logic                              wload_dense_i,
  input  logic [Cols*N*DataW-1:0]           wload_val_i,   // column c at [c*N*DataW +: N*DataW]
  input  logic [Cols*N*$clog2(M)-1:0]       wload_meta_i,  // column c at [c*N*IdxW +: N*IdxW]
  output logic [Cols-1:0]                   wload_illegal_o, // per column of the loaded row
  output logic [1:0]                        bank_busy_o,

  // Activation stream in: lane r*Lanes + l at [(r*Lanes + l)*DataW +: DataW], Lanes = M (N
  // without Sparse).
  input  logic                              in_valid_i,
  input  logic                              in_bank_i,
  input  logic [Rows*(Sparse ? M : N)*DataW-1:0] in_act_i,

  // Partial-sum stream out: column c at [c*AccW +: AccW].
  output logic                              out_valid_o,
  output logic                              out_err_o,
  output logic [Cols*AccW-1:0]              out_psum_o
);

  localparam int unsigned IdxW     = $clog2(M);
  localparam int unsigned Lanes    = Sparse ? M : N;
  localparam int unsigned ActW     = Lanes * DataW;
  localparam int unsigned RowW     = Rows > 1 ? $clog2(Rows) : 1;
  localparam int unsigned Choices  = M - N + 1;
  localparam int unsigned SelW     = Choices > 1 ? $clog2(Choices) : 1;
  localparam int unsigned PeSelW   = Sparse ? N * SelW : 1;
  // Cycles from a beat's entry to the last cycle a PE reads its bank (the bottom-right PE's
  // select stage), and to its results leaving the bottom.
  localparam int unsigned BankUse  = Rows + Cols - 1;
  localparam int unsigned Latency  = Rows + Cols + nmsa_pkg::PeLatency - 2;

  // Rows + Cols >= 3 keeps the beat-tag pipeline at least two stages long.
  if (Rows < 1 || Cols < 1 || Rows + Cols < 3) begin : g_bad_size
    $error("nmsa_array: need Rows, Cols >= 1 and Rows + Cols >= 3");
  end

  // ---------------------------------------------------------------------------------------------
  // Interconnect, flattened: horizontal links h[r*(Cols+1) + c] enter PE(r,c) from the left,
  // vertical links v[r*Cols + c] enter PE(r,c) from above (row Rows is the bottom edge).
  // ---------------------------------------------------------------------------------------------
  logic            h_valid [Rows*(Cols+1)];
  logic            h_bank  [Rows*(Cols+1)];
  logic [ActW-1:0] h_act   [Rows*(Cols+1)];
  logic [AccW-1:0] v_psum   [(Rows+1)*Cols];
  logic            v_poison [(Rows+1)*Cols];

  // ---------------------------------------------------------------------------------------------
  // Input skew: row r sees a beat r cycles after it enters.
  // ---------------------------------------------------------------------------------------------
  for (genvar r = 0; r < Rows; r++) begin : g_skew
    localparam int unsigned BeatW = ActW + 2;
    logic [BeatW-1:0] beat_in;
    assign beat_in = {in_valid_i, in_bank_i, in_act_i[r*ActW +: ActW]};

    if (r == 0) begin : g_direct
      assign {h_valid[0], h_bank[0], h_act[0]} = beat_in;
    end else begin : g_delay
      logic [BeatW-1:0] stage_q [r];
      always_ff @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          for (int unsigned s = 0; s < r; s++) begin
            stage_q[s] <= '0;
          end
        end else begin
          stage_q[0] <= beat_in;
          for (int unsigned s = 1; s < r; s++) begin
            stage_q[s] <= stage_q[s-1];
          end
        end
      end
      assign {h_valid[r*(Cols+1)], h_bank[r*(Cols+1)], h_act[r*(Cols+1)]} = stage_q[r-1];
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Weight load: the loaded row's metadata decoded once per column, broadcast down the column.
  // ---------------------------------------------------------------------------------------------
  logic [Cols*PeSelW-1:0] col_sel;
  logic [Cols-1:0]        col_legal;

  for (genvar c = 0; c < Cols; c++) begin : g_decode
    if (Sparse) begin : g_sparse
      logic [N*IdxW-1:0] idx;

      nmsa_meta_decoder #(
        .N (N),
        .M (M)
      ) u_meta_decoder (
        .meta_i  (wload_meta_i[c*N*IdxW +: N*IdxW]),
        .dense_i (wload_dense_i),
        .idx_o   (idx),
        .legal_o (col_legal[c])
      );

      // Slot j's select is its offset from position j (nmsa_pe); meaningless for an illegal
      // code, whose results are poisoned.
      always_comb begin
        for (int unsigned j = 0; j < N; j++) begin
          col_sel[(c*N + j)*SelW +: SelW] = SelW'(idx[j*IdxW +: IdxW] - IdxW'(j));
        end
      end
    end else begin : g_dense_only
      assign col_sel[c]   = 1'b0;
      assign col_legal[c] = 1'b1;
    end
  end

  if (!Sparse) begin : g_no_meta
    logic unused;
    assign unused = ^{wload_meta_i, wload_dense_i};
  end

  assign wload_illegal_o = {Cols{wload_valid_i}} & ~col_legal;

  // ---------------------------------------------------------------------------------------------
  // PE grid
  // ---------------------------------------------------------------------------------------------
  for (genvar c = 0; c < Cols; c++) begin : g_top_edge
    assign v_psum[c]   = '0;
    assign v_poison[c] = 1'b0;
  end

  for (genvar r = 0; r < Rows; r++) begin : g_row
    logic row_selected;
    assign row_selected = wload_valid_i & (wload_row_i == RowW'(r));

    for (genvar c = 0; c < Cols; c++) begin : g_col
      nmsa_pe #(
        .N      (N),
        .M      (M),
        .DataW  (DataW),
        .AccW   (AccW),
        .Sparse (Sparse)
      ) u_pe (
        .clk_i         (clk_i),
        .rst_ni        (rst_ni),
        .wload_en_i    (row_selected),
        .wload_bank_i  (wload_bank_i),
        .wload_val_i   (wload_val_i[c*N*DataW +: N*DataW]),
        .wload_sel_i   (col_sel[c*PeSelW +: PeSelW]),
        .wload_legal_i (col_legal[c]),
        .act_valid_i   (h_valid[r*(Cols+1) + c]),
        .act_bank_i    (h_bank[r*(Cols+1) + c]),
        .act_i         (h_act[r*(Cols+1) + c]),
        .act_valid_o   (h_valid[r*(Cols+1) + c + 1]),
        .act_bank_o    (h_bank[r*(Cols+1) + c + 1]),
        .act_o         (h_act[r*(Cols+1) + c + 1]),
        .psum_i        (v_psum[r*Cols + c]),
        .psum_poison_i (v_poison[r*Cols + c]),
        .psum_o        (v_psum[(r+1)*Cols + c]),
        .psum_poison_o (v_poison[(r+1)*Cols + c])
      );
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Output deskew: column c leaves the bottom Rows + c + PeLatency - 1 cycles after its beat
  // entered; delay it by Cols - 1 - c more so that the whole row leaves together, Latency cycles
  // after entry.
  // ---------------------------------------------------------------------------------------------
  logic [Cols-1:0] col_poison;

  for (genvar c = 0; c < Cols; c++) begin : g_deskew
    localparam int unsigned Delay = Cols - 1 - c;
    logic [AccW:0] bottom;
    assign bottom = {v_poison[Rows*Cols + c], v_psum[Rows*Cols + c]};

    if (Delay == 0) begin : g_direct
      assign {col_poison[c], out_psum_o[c*AccW +: AccW]} = bottom;
    end else begin : g_delay
      logic [AccW:0] stage_q [Delay];
      always_ff @(posedge clk_i) begin
        stage_q[0] <= bottom;
        for (int unsigned s = 1; s < Delay; s++) begin
          stage_q[s] <= stage_q[s-1];
        end
      end
      assign {col_poison[c], out_psum_o[c*AccW +: AccW]} = stage_q[Delay-1];
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Beat tags: which beats are inside the array, and with which bank while some PE may still read
  // it. Drives out_valid_o and tells the weight loader which bank it may overwrite.
  // ---------------------------------------------------------------------------------------------
  logic [Latency-1:0] tag_valid_q;
  logic [BankUse-2:0] tag_bank_q;    // the window but its last cycle: bank_busy_q covers that
  logic [BankUse-1:0] use_valid_d, use_bank_d;   // the window's tags as they will be
  logic [1:0]         bank_busy_q;

  assign use_valid_d = {tag_valid_q[BankUse-2:0], in_valid_i};
  assign use_bank_d  = {tag_bank_q, in_bank_i};

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      tag_valid_q <= '0;
      tag_bank_q  <= '0;
    end else begin
      tag_valid_q <= {tag_valid_q[Latency-2:0], in_valid_i};
      tag_bank_q  <= use_bank_d[BankUse-2:0];
    end
  end

  // bank_busy_o is a register: the OR over the window is taken of the tags as they will be.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      bank_busy_q <= '0;
    end else begin
      bank_busy_q[0] <= |(use_valid_d & ~use_bank_d);
      bank_busy_q[1] <= |(use_valid_d & use_bank_d);
    end
  end

  assign bank_busy_o = bank_busy_q;

  assign out_valid_o = tag_valid_q[Latency-1] & ~(|col_poison);
  assign out_err_o   = tag_valid_q[Latency-1] & (|col_poison);

  // ---------------------------------------------------------------------------------------------
  // Interface rules (simulation with --assert)
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
    if (check_q && wload_valid_i) begin
      // Overwriting a bank that beats inside the array still use would corrupt their results.
      assert (!bank_busy_o[wload_bank_i]);
      assert (32'(wload_row_i) < Rows);
    end
  end
`endif

endmodule

`default_nettype wire
