// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Registered multiplier: p_o = a * b two cycles after a_i and b_i (operands registered, product
// registered), signed or unsigned per operand.
//
// Why a module of its own: on ECP5 the product should be registered inside the DSP. Yosys maps an
// inferred `*` to a combinational MULT18X18D and leaves the product flops in the fabric, so every
// multiply pays a routed hop out of the DSP column before its register; in the whole accelerator
// that made the multipliers among the longest paths. With NMSA_ECP5_DSP defined (the FPGA flow
// defines it for ECP5 only) this module is one MULT18X18D with its output register (REG_OUTPUT)
// on the clock, fed by operand flops in the fabric: the same two-cycle behaviour. The operand
// registers stay in the fabric on purpose: with them inside the DSP too (REG_INPUTA/B) the lane
// multiplexers drive the DSP inputs directly, and nextpnr could not route the whole accelerator.
// Everywhere else (Verilator, Icarus, iCE40, generic synthesis) it is the behavioural form below,
// which simulation checks bit for bit.
`default_nettype none

module nmsa_mul #(
  parameter int unsigned AW      = 8,
  parameter int unsigned BW      = 8,
  parameter bit          ASigned = 1'b1,
  parameter bit          BSigned = 1'b1
) (
  input  logic             clk_i,
  input  logic [AW-1:0]    a_i,
  input  logic [BW-1:0]    b_i,
  output logic [AW+BW-1:0] p_o
);

  localparam int unsigned PW = AW + BW;

`ifdef NMSA_ECP5_DSP
  if (AW > 18 || BW > 18) begin : g_too_wide
    $error("nmsa_mul: a MULT18X18D takes operands of at most 18 bits");
  end

  // Operand flops in the fabric, widened to 18 bits the way SIGNEDA/SIGNEDB read them.
  logic [17:0] a18, b18;
  logic [35:0] p36;
  always_ff @(posedge clk_i) begin
    a18 <= ASigned ? 18'($signed(a_i)) : 18'(a_i);
    b18 <= BSigned ? 18'($signed(b_i)) : 18'(b_i);
  end
  assign p_o = p36[PW-1:0];

  MULT18X18D #(
    .REG_OUTPUT_CLK ("CLK0"),
    .GSR            ("DISABLED")
  ) u_dsp (
    .CLK0 (clk_i), .CE0 (1'b1), .RST0 (1'b0),
    .SIGNEDA (ASigned), .SIGNEDB (BSigned), .SOURCEA (1'b0), .SOURCEB (1'b0),
    .A0  (a18[0]),  .A1  (a18[1]),  .A2  (a18[2]),  .A3  (a18[3]),  .A4  (a18[4]),
    .A5  (a18[5]),  .A6  (a18[6]),  .A7  (a18[7]),  .A8  (a18[8]),  .A9  (a18[9]),
    .A10 (a18[10]), .A11 (a18[11]), .A12 (a18[12]), .A13 (a18[13]), .A14 (a18[14]),
    .A15 (a18[15]), .A16 (a18[16]), .A17 (a18[17]),
    .B0  (b18[0]),  .B1  (b18[1]),  .B2  (b18[2]),  .B3  (b18[3]),  .B4  (b18[4]),
    .B5  (b18[5]),  .B6  (b18[6]),  .B7  (b18[7]),  .B8  (b18[8]),  .B9  (b18[9]),
    .B10 (b18[10]), .B11 (b18[11]), .B12 (b18[12]), .B13 (b18[13]), .B14 (b18[14]),
    .B15 (b18[15]), .B16 (b18[16]), .B17 (b18[17]),
    .C0  (1'b0), .C1  (1'b0), .C2  (1'b0), .C3  (1'b0), .C4  (1'b0), .C5  (1'b0),
    .C6  (1'b0), .C7  (1'b0), .C8  (1'b0), .C9  (1'b0), .C10 (1'b0), .C11 (1'b0),
    .C12 (1'b0), .C13 (1'b0), .C14 (1'b0), .C15 (1'b0), .C16 (1'b0), .C17 (1'b0),
    .P0  (p36[0]),  .P1  (p36[1]),  .P2  (p36[2]),  .P3  (p36[3]),  .P4  (p36[4]),
    .P5  (p36[5]),  .P6  (p36[6]),  .P7  (p36[7]),  .P8  (p36[8]),  .P9  (p36[9]),
    .P10 (p36[10]), .P11 (p36[11]), .P12 (p36[12]), .P13 (p36[13]), .P14 (p36[14]),
    .P15 (p36[15]), .P16 (p36[16]), .P17 (p36[17]), .P18 (p36[18]), .P19 (p36[19]),
    .P20 (p36[20]), .P21 (p36[21]), .P22 (p36[22]), .P23 (p36[23]), .P24 (p36[24]),
    .P25 (p36[25]), .P26 (p36[26]), .P27 (p36[27]), .P28 (p36[28]), .P29 (p36[29]),
    .P30 (p36[30]), .P31 (p36[31]), .P32 (p36[32]), .P33 (p36[33]), .P34 (p36[34]),
    .P35 (p36[35])
  );
`else
  logic [AW-1:0] a_q;
  logic [BW-1:0] b_q;
  logic [PW-1:0] a_ext, b_ext, p_q;

  // The product fits in PW bits, so the low PW bits of the widened operands' product are it.
  assign a_ext = ASigned ? PW'($signed(a_q)) : PW'(a_q);
  assign b_ext = BSigned ? PW'($signed(b_q)) : PW'(b_q);

  always_ff @(posedge clk_i) begin
    a_q <= a_i;
    b_q <= b_i;
    p_q <= a_ext * b_ext;
  end

  assign p_o = p_q;
`endif

endmodule

`default_nettype wire
