// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Epilogue of Lanes output channels per cycle (docs/isa.md, STORE), per channel:
//   INT8:  q = sat8(round((acc + bias) * multiplier / 2^shift)), then max(q, 0) with ReLU
//   INT32: acc + bias (wrapping), then max(., 0) with ReLU
// Rounding is to nearest with ties toward +infinity. The arithmetic is exact: (acc + bias) has 33
// bits and the product 65.
//
// A fully pipelined datapath of Latency cycles, one register-to-register step per stage, so that
// it keeps up with the clock of the array (docs/architecture.md, "Epilogue"):
//   1  v = acc + bias                      (33 bits)
//   2  four 18x18 partial products of v * multiplier, one DSP each, with operand and output
//      registers: v = vh * 2^17 + vl, multiplier = mh * 2^16 + ml (vl, ml unsigned)
//   3  two partial sums;  4  the 66-bit product p
//   5  the rounding shift, as q = (2p) >>> shift, in two steps (by 8 * shift[5:3], then by
//      shift[2:0]), with the saturation test: does 2p have a bit at or above shift + 8 that
//      differs from its sign? Then r = (q + 1) >>> 1 = round(p / 2^shift) (for shift = 0: p).
//   7  saturate, ReLU, output
// Only the low 9 bits of q are ever needed, so the shifter is trimmed to them.
`default_nettype none

module nmsa_epilogue #(
  parameter int unsigned Lanes = 4,
  parameter int unsigned AccW  = 32
) (
  input  logic                                      clk_i,
  input  logic                                      rst_ni,

  input  logic                                      in_valid_i,
  input  logic [Lanes*AccW-1:0]                     in_acc_i,
  input  logic [Lanes*nmsa_pkg::EpiParamBits-1:0]   in_params_i,  // per lane, docs/isa.md
  input  logic                                      in_relu_i,
  input  logic                                      in_int32_i,

  // Latency cycles later: lane l at [32l +: 32], an INT8 result in its low byte.
  output logic                                      out_valid_o,
  output logic [Lanes*32-1:0]                       out_data_o
);

  localparam int unsigned ParamW = nmsa_pkg::EpiParamBits;
  localparam int unsigned Stages = nmsa_pkg::EpiLatency;

  if (AccW != 32) begin : g_bad_accw
    $error("nmsa_epilogue: the epilogue is defined for 32-bit accumulators");
  end
  if (Stages != 7) begin : g_bad_latency
    $error("nmsa_epilogue: the pipeline below has seven stages; nmsa_pkg::EpiLatency must say so");
  end

  // Bits of a parameter record beyond bias, multiplier and the shift's low 6 bits are ignored.
  logic unused;
  always_comb begin
    unused = 1'b0;
    for (int unsigned l = 0; l < Lanes; l++) begin
      unused = unused ^ (^in_params_i[l*ParamW + nmsa_pkg::EpiShiftLsb + 6 +: ParamW - 70]);
    end
  end

  // Mode and valid travel with the data.
  logic [Stages-1:0] valid_q, relu_q, int32_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q <= '0;
    end else begin
      valid_q <= {valid_q[Stages-2:0], in_valid_i};
    end
  end

  always_ff @(posedge clk_i) begin
    relu_q  <= {relu_q[Stages-2:0], in_relu_i};
    int32_q <= {int32_q[Stages-2:0], in_int32_i};
  end

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic signed [31:0] acc, bias, mult;
    logic        [5:0]  shift;

    assign acc   = in_acc_i[l*AccW +: 32];
    assign bias  = in_params_i[l*ParamW + nmsa_pkg::EpiBiasLsb +: 32];
    assign mult  = in_params_i[l*ParamW + nmsa_pkg::EpiMultLsb +: 32];
    assign shift = in_params_i[l*ParamW + nmsa_pkg::EpiShiftLsb +: 6];

    // 1: v = acc + bias. The INT32 result (its low 32 bits) travels to the end unchanged.
    logic signed [32:0] v_d;
    logic        [31:0] v_q;
    logic        [5:0]  shift_q [5];        // used until stage 5
    logic        [31:0] wrap_q [Stages-2];  // v's low 32 bits, from stage 2 on

    assign v_d = 33'(acc) + 33'(bias);

    always_ff @(posedge clk_i) begin
      v_q        <= v_d[31:0];
      shift_q[0] <= shift;
      wrap_q[0]  <= v_q;
      for (int unsigned s = 1; s < 5; s++) begin
        shift_q[s] <= shift_q[s-1];
      end
      for (int unsigned s = 1; s < Stages - 2; s++) begin
        wrap_q[s] <= wrap_q[s-1];
      end
    end

    // 1, 2: partial products, each 18 x 18 signed (the unsigned low halves get a zero sign
    // bit): v and the multiplier go straight into the multipliers' operand registers (nmsa_mul:
    // on ECP5 the DSPs' own), the products come out of their output registers.
    logic signed [17:0] vl, vh, ml, mh;
    logic signed [35:0] p_ll_q, p_lh_q, p_hl_q, p_hh_q;

    assign vl = {1'b0, v_d[16:0]};
    assign vh = 18'($signed(v_d[32:17]));
    assign ml = {2'b00, mult[15:0]};
    assign mh = 18'($signed(mult[31:16]));

    nmsa_mul #(.AW (18), .BW (18)) u_mul_ll (.clk_i (clk_i), .a_i (vl), .b_i (ml), .p_o (p_ll_q));
    nmsa_mul #(.AW (18), .BW (18)) u_mul_lh (.clk_i (clk_i), .a_i (vl), .b_i (mh), .p_o (p_lh_q));
    nmsa_mul #(.AW (18), .BW (18)) u_mul_hl (.clk_i (clk_i), .a_i (vh), .b_i (ml), .p_o (p_hl_q));
    nmsa_mul #(.AW (18), .BW (18)) u_mul_hh (.clk_i (clk_i), .a_i (vh), .b_i (mh), .p_o (p_hh_q));

    // 3, 4: p = p_hh * 2^33 + p_hl * 2^17 + p_lh * 2^16 + p_ll, each sum only as wide as it
    // can get (|p_ll| < 2^33, |p_lh| <= 2^32, |p_hl| < 2^31, |p_hh| <= 2^30).
    logic signed [50:0] lo_q;
    logic signed [48:0] hi_q;
    logic signed [65:0] p_q;

    always_ff @(posedge clk_i) begin
      lo_q <= 51'(p_ll_q) + (51'(p_lh_q) <<< 16);
      hi_q <= 49'(p_hl_q) + (49'(p_hh_q) <<< 16);
      p_q  <= 66'(lo_q) + (66'(hi_q) <<< 17);
    end

    // 5, 6: q = (2p) >>> shift, low 9 bits, and whether the result saturates.
    logic signed [66:0] p2;
    logic signed [66:0] coarse;
    logic        [66:0] differs;
    logic        [8:0]  over_group;   // differs at or above shift + 8, per 8-bit group of bits
    logic signed [66:0] coarse_q;
    logic        [8:0]  over_group_q;
    logic        [8:0]  q9_q;
    logic               over_q, sign_q, sign1_q;

    assign p2      = {p_q, 1'b0};
    assign coarse  = p2 >>> {shift_q[3][5:3], 3'b000};
    assign differs = p2 ^ {67{p2[66]}};

    // Positions at or above shift + 8, as a thermometer code (a shifted constant maps to LUTs;
    // a compare per position would take a carry chain each).
    logic [66:0] above;
    assign above = {67{1'b1}} << (7'(shift_q[3]) + 7'd8);

    always_comb begin
      for (int unsigned g = 0; g < 9; g++) begin
        over_group[g] = 1'b0;
        for (int unsigned b = 0; b < 8; b++) begin
          if (g*8 + b < 67) begin
            over_group[g] = over_group[g] | (differs[g*8 + b] & above[g*8 + b]);
          end
        end
      end
    end

    always_ff @(posedge clk_i) begin
      coarse_q     <= coarse;
      over_group_q <= over_group;
      sign1_q      <= p2[66];
      q9_q         <= 9'(coarse_q >>> shift_q[4][2:0]);
      over_q       <= |over_group_q;
      sign_q       <= sign1_q;
    end

    // 7: round, saturate, ReLU. Without `over`, q is in [-256, 255] and r in [-128, 128].
    logic signed [9:0] r10;
    logic signed [7:0] sat8;
    logic        [31:0] out_d, out_q;

    assign r10 = ($signed({q9_q[8], q9_q}) + 10'sd1) >>> 1;
    always_comb begin
      if (over_q) begin
        sat8 = sign_q ? -8'sd128 : 8'sd127;
      end else if (r10 == 10'sd128) begin
        sat8 = 8'sd127;
      end else begin
        sat8 = r10[7:0];
      end
      if (int32_q[Stages-2]) begin
        out_d = (relu_q[Stages-2] && wrap_q[Stages-3][31]) ? 32'd0 : wrap_q[Stages-3];
      end else begin
        out_d = {24'd0, (relu_q[Stages-2] && sat8 < 0) ? 8'd0 : sat8};
      end
    end

    always_ff @(posedge clk_i) begin
      out_q <= out_d;
    end

    assign out_data_o[l*32 +: 32] = out_q;
  end

  assign out_valid_o = valid_q[Stages-1];

endmodule

`default_nettype wire
