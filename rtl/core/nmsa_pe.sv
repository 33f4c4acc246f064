// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Weight-stationary N:M processing element. It holds, for one output channel and one group of M
// K-positions, N weights and the K-position each multiplies, in two banks: one bank computes
// while the other loads the next tile's weights. Each activation beat carries the bank it uses,
// so the switch to the new tile travels through the array with the data and costs no bubble.
//
// Per valid beat, in a pipeline of nmsa_pkg::PeLatency stages so that every stage is one
// register-to-register step (docs/architecture.md, "PE pipeline"):
//   0. arrival: the lanes and the bank's lane indices are registered; the lanes pass right;
//   1. select: N of the lanes, and the bank's weights (the multipliers' operand registers);
//   2. multiply: N products (one DSP each, with its output register);
//   3. sum of the N products;
//   4. accumulate into the partial sum from above, and pass it down. The partial sum from above arrives exactly
// when this PE's sum of products for the same beat is ready, because the PE above saw the beat
// one cycle earlier and took as many stages.
//
// The metadata is decoded once per column in nmsa_array; a PE stores each slot's lane select.
// Sparse = 0 compiles the N:M support out (the dense-only design of the same multipliers): no
// selects, no lane mux; a row's lanes are its N consecutive K-positions.
//
// A bank loaded with an illegal metadata code poisons every partial sum computed with it; the
// poison travels down with the sum so the array never reports that result as valid.
`default_nettype none

module nmsa_pe #(
  parameter int unsigned N      = nmsa_pkg::DefaultN,
  parameter int unsigned M      = nmsa_pkg::DefaultM,
  parameter int unsigned DataW  = nmsa_pkg::DefaultDataW,
  parameter int unsigned AccW   = nmsa_pkg::DefaultAccW,
  parameter bit          Sparse = 1'b1
) (
  input  logic                                   clk_i,
  input  logic                                   rst_ni,

  // Weight load into one bank (the other keeps computing): N values, each slot's lane select
  // (its offset from the slot, see nmsa_array) and whether the group's metadata is legal.
  input  logic                                   wload_en_i,
  input  logic                                   wload_bank_i,
  input  logic [N*DataW-1:0]                     wload_val_i,
  input  logic [(Sparse ? N*((M-N+1) > 1 ? $clog2(M-N+1) : 1) : 1)-1:0] wload_sel_i,
  input  logic                                   wload_legal_i,

  // Activation beat from the left (M lanes, or N without Sparse), passed on one cycle later.
  input  logic                                   act_valid_i,
  input  logic                                   act_bank_i,
  input  logic [(Sparse ? M : N)*DataW-1:0]      act_i,
  output logic                                   act_valid_o,
  output logic                                   act_bank_o,
  output logic [(Sparse ? M : N)*DataW-1:0]      act_o,

  // Partial sum from above, passed down with this PE's products added.
  input  logic [AccW-1:0]                        psum_i,
  input  logic                                   psum_poison_i,
  output logic [AccW-1:0]                        psum_o,
  output logic                                   psum_poison_o
);

  localparam int unsigned Lanes = Sparse ? M : N;
  localparam int unsigned ValW  = N * DataW;
  localparam int unsigned ProdW = 2 * DataW;
  localparam int unsigned DotW  = ProdW + $clog2(N);

  if (AccW < DotW + 1) begin : g_bad_accw
    $error("nmsa_pe: AccW too narrow for N products of DataW-bit operands");
  end
  if (nmsa_pkg::PeLatency != 5) begin : g_bad_latency
    $error("nmsa_pe: the pipeline below has five stages; nmsa_pkg::PeLatency must say so");
  end

  // ---------------------------------------------------------------------------------------------
  // Weight banks, written as two explicit registers (a variable part-select on a flat vector of
  // banks costs several times the logic in Yosys 0.23).
  // ---------------------------------------------------------------------------------------------
  logic [ValW-1:0]   val0_q, val1_q;
  logic              legal0_q, legal1_q;
  logic              load0, load1;

  assign load0 = wload_en_i & ~wload_bank_i;
  assign load1 = wload_en_i & wload_bank_i;

  always_ff @(posedge clk_i) begin
    if (load0) val0_q <= wload_val_i;
    if (load1) val1_q <= wload_val_i;
  end

  // A bank that was never loaded since reset counts as illegal: computing with it poisons.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      legal0_q <= 1'b0;
      legal1_q <= 1'b0;
    end else begin
      if (load0) legal0_q <= wload_legal_i;
      if (load1) legal1_q <= wload_legal_i;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Stage 0, the arrival cycle: the activations are registered (they also pass right from that
  // register), and the bank's lane selects with them. Stage 1: the lane mux, driven by those
  // registers only, and the bank's weights into the multipliers' operand registers. (Selecting
  // the bank and the lane in one step made Yosys copy the bank mux into every output bit.)
  // ---------------------------------------------------------------------------------------------
  logic                   act_valid_q, act_bank_q;
  logic [Lanes*DataW-1:0] act_q;
  logic [ValW-1:0]        act_sel;

  if (Sparse) begin : g_sparse
    // Indices are strictly increasing, so slot j can only hold positions j .. j + M - N: a
    // slot's select is its offset from j, and its mux has M - N + 1 inputs (3 for 2:4, which
    // maps to one LUT4 pair and a PFU mux per bit on ECP5, half of what a 4:1 mux takes).
    localparam int unsigned Choices = M - N + 1;
    localparam int unsigned SelW    = Choices > 1 ? $clog2(Choices) : 1;

    logic [N*SelW-1:0] sel0_q, sel1_q, beat_sel_q;

    always_ff @(posedge clk_i) begin
      if (load0) sel0_q <= wload_sel_i;
      if (load1) sel1_q <= wload_sel_i;
      beat_sel_q <= act_bank_i ? sel1_q : sel0_q;
    end

    always_comb begin
      act_sel = '0;
      for (int unsigned j = 0; j < N; j++) begin
        for (int unsigned r = 0; r < Choices; r++) begin
          if (beat_sel_q[j*SelW +: SelW] == SelW'(r)) begin
            act_sel[j*DataW +: DataW] = act_q[(j + r)*DataW +: DataW];
          end
        end
      end
    end
  end else begin : g_dense_only
    // Slot j multiplies lane j.
    assign act_sel = act_q;

    logic unused;
    assign unused = ^wload_sel_i;
  end

  logic [ValW-1:0] w_sel;
  logic            v1_q, ill1_q;

  assign w_sel = act_bank_q ? val1_q : val0_q;

  always_ff @(posedge clk_i) begin
    act_q <= act_i;
  end

  // ---------------------------------------------------------------------------------------------
  // Stages 1 and 2: the selected lanes and weights into each multiplier's operand registers,
  // and its product register (nmsa_mul: on ECP5 the DSP's own registers). Stage 3: the sum.
  // ---------------------------------------------------------------------------------------------
  logic [N*ProdW-1:0] p_q;
  logic [DotW-1:0]    dot_d, dot_q;
  logic               v2_q, ill2_q, v3_q, ill3_q;

  for (genvar j = 0; j < N; j++) begin : g_mul
    nmsa_mul #(
      .AW (DataW),
      .BW (DataW)
    ) u_mul (
      .clk_i (clk_i),
      .a_i   (act_sel[j*DataW +: DataW]),
      .b_i   (w_sel[j*DataW +: DataW]),
      .p_o   (p_q[j*ProdW +: ProdW])
    );
  end

  always_comb begin
    dot_d = '0;
    for (int unsigned j = 0; j < N; j++) begin
      dot_d = dot_d + DotW'($signed(p_q[j*ProdW +: ProdW]));
    end
  end

  always_ff @(posedge clk_i) begin
    dot_q <= dot_d;
  end

  // ---------------------------------------------------------------------------------------------
  // Stage 4: accumulate and pass down.
  // ---------------------------------------------------------------------------------------------
  logic            poison_d, poison_q;
  logic [AccW-1:0] psum_d, psum_q;

  assign psum_d   = psum_i + AccW'($signed(dot_q));
  assign poison_d = v3_q & (psum_poison_i | ill3_q);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      act_valid_q <= 1'b0;
      act_bank_q  <= 1'b0;
      v1_q        <= 1'b0;
      v2_q        <= 1'b0;
      v3_q        <= 1'b0;
      ill1_q      <= 1'b0;
      ill2_q      <= 1'b0;
      ill3_q      <= 1'b0;
      poison_q    <= 1'b0;
    end else begin
      act_valid_q <= act_valid_i;
      act_bank_q  <= act_bank_i;
      v1_q        <= act_valid_q;
      v2_q        <= v1_q;
      v3_q        <= v2_q;
      ill1_q      <= ~(act_bank_q ? legal1_q : legal0_q);
      ill2_q      <= ill1_q;
      ill3_q      <= ill2_q;
      poison_q    <= poison_d;
    end
  end

  // Datapath registers need no reset: their contents are qualified by the valid bits.
  always_ff @(posedge clk_i) begin
    psum_q <= psum_d;
  end

  assign act_valid_o   = act_valid_q;
  assign act_bank_o    = act_bank_q;
  assign act_o         = act_q;
  assign psum_o        = psum_q;
  assign psum_poison_o = poison_q;

endmodule

`default_nettype wire
