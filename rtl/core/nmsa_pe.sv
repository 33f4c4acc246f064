// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Weight-stationary N:M processing element. It holds, for one output channel and one group of M
// K-positions, N weights and their decoded activation selects, in two banks: one bank computes
// while the other loads the next tile's weights. Each activation beat carries the bank it uses,
// so the switch to the new tile travels through the array with the data and costs no bubble.
//
// Per valid beat: select N of the M activations, N multiply-accumulates into the partial sum from
// above, pass activations right and the partial sum down (both registered, one cycle each).
// A bank loaded with an illegal metadata code poisons every partial sum computed with it; the
// poison travels down with the sum so the array never reports that result as valid.
`default_nettype none

module nmsa_pe #(
  parameter int unsigned N     = nmsa_pkg::DefaultN,
  parameter int unsigned M     = nmsa_pkg::DefaultM,
  parameter int unsigned DataW = nmsa_pkg::DefaultDataW,
  parameter int unsigned AccW  = nmsa_pkg::DefaultAccW
) (
  input  logic                    clk_i,
  input  logic                    rst_ni,

  // Weight load into one bank (the other keeps computing).
  input  logic                    wload_en_i,
  input  logic                    wload_bank_i,
  input  logic                    wload_dense_i,
  input  logic [N*DataW-1:0]      wload_val_i,
  input  logic [N*$clog2(M)-1:0]  wload_meta_i,
  output logic                    wload_illegal_o,

  // Activation beat from the left, passed on to the right one cycle later.
  input  logic                    act_valid_i,
  input  logic                    act_bank_i,
  input  logic [M*DataW-1:0]      act_i,
  output logic                    act_valid_o,
  output logic                    act_bank_o,
  output logic [M*DataW-1:0]      act_o,

  // Partial sum from above, passed down one cycle later with this PE's products added.
  input  logic [AccW-1:0]         psum_i,
  input  logic                    psum_poison_i,
  output logic [AccW-1:0]         psum_o,
  output logic                    psum_poison_o
);

  localparam int unsigned NumBanks = nmsa_pkg::NumWeightBanks;
  localparam int unsigned ProdW    = 2 * DataW;

  if (AccW < ProdW + $clog2(N) + 1) begin : g_bad_accw
    $error("nmsa_pe: AccW too narrow for N products of DataW-bit operands");
  end

  // ---------------------------------------------------------------------------------------------
  // Weight banks
  // ---------------------------------------------------------------------------------------------
  logic [N*M-1:0]     load_sel;
  logic               load_legal;

  nmsa_meta_decoder #(
    .N (N),
    .M (M)
  ) u_meta_decoder (
    .meta_i  (wload_meta_i),
    .dense_i (wload_dense_i),
    .sel_o   (load_sel),
    .legal_o (load_legal)
  );

  assign wload_illegal_o = wload_en_i & ~load_legal;

  // Banks are flat vectors (bank b at [b*W +: W]) so that both simulation and synthesis front
  // ends accept the whole-bank register assignment.
  localparam int unsigned ValW = N * DataW;
  localparam int unsigned SelW = N * M;

  logic [NumBanks*ValW-1:0] val_d, val_q;
  logic [NumBanks*SelW-1:0] sel_d, sel_q;
  logic [NumBanks-1:0]      legal_d, legal_q;

  always_comb begin
    val_d   = val_q;
    sel_d   = sel_q;
    legal_d = legal_q;
    if (wload_en_i) begin
      val_d[wload_bank_i*ValW +: ValW] = wload_val_i;
      sel_d[wload_bank_i*SelW +: SelW] = load_sel;
      legal_d[wload_bank_i]            = load_legal;
    end
  end

  // A bank that was never loaded since reset counts as illegal: computing with it poisons.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      legal_q <= '0;
    end else begin
      legal_q <= legal_d;
    end
  end

  always_ff @(posedge clk_i) begin
    val_q <= val_d;
    sel_q <= sel_d;
  end

  // ---------------------------------------------------------------------------------------------
  // Select and multiply-accumulate
  // ---------------------------------------------------------------------------------------------
  logic [N*DataW-1:0] weights;
  logic [N*M-1:0]     sel;
  logic [DataW-1:0]   act_sel [N];
  logic [AccW-1:0]    dot;

  assign weights = val_q[act_bank_i*ValW +: ValW];
  assign sel     = sel_q[act_bank_i*SelW +: SelW];

  // One-hot AND-OR mux: N M:1 selects of the activation group.
  always_comb begin
    for (int unsigned j = 0; j < N; j++) begin
      act_sel[j] = '0;
      for (int unsigned m = 0; m < M; m++) begin
        act_sel[j] = act_sel[j] | (act_i[m*DataW +: DataW] & {DataW{sel[j*M + m]}});
      end
    end
  end

  always_comb begin
    dot = '0;
    for (int unsigned j = 0; j < N; j++) begin
      dot = dot + AccW'($signed(act_sel[j]) * $signed(weights[j*DataW +: DataW]));
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Pipeline registers
  // ---------------------------------------------------------------------------------------------
  logic               act_valid_q, act_bank_q, poison_d, poison_q;
  logic [M*DataW-1:0] act_q;
  logic [AccW-1:0]    psum_d, psum_q;

  assign psum_d   = psum_i + dot;
  assign poison_d = act_valid_i & (psum_poison_i | ~legal_q[act_bank_i]);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      act_valid_q <= 1'b0;
      act_bank_q  <= 1'b0;
      poison_q    <= 1'b0;
    end else begin
      act_valid_q <= act_valid_i;
      act_bank_q  <= act_bank_i;
      poison_q    <= poison_d;
    end
  end

  // Datapath registers need no reset: their contents are qualified by act_valid_q.
  always_ff @(posedge clk_i) begin
    act_q  <= act_i;
    psum_q <= psum_d;
  end

  assign act_valid_o   = act_valid_q;
  assign act_bank_o    = act_bank_q;
  assign act_o         = act_q;
  assign psum_o        = psum_q;
  assign psum_poison_o = poison_q;

endmodule

`default_nettype wire
