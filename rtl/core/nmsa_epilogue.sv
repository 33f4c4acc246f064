// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Epilogue of one accumulator row (docs/isa.md, STORE), combinational, per output channel:
//   INT8:  q = sat8(round((acc + bias) * multiplier / 2^shift)), then max(q, 0) with ReLU
//   INT32: acc + bias (wrapping), then max(., 0) with ReLU
// Rounding is to nearest with ties toward +infinity: add 2^(shift-1), shift arithmetically.
// The arithmetic is exact: (acc + bias) has 33 bits and the product 65, computed in 66.
`default_nettype none

module nmsa_epilogue #(
  parameter int unsigned Cols = 8,
  parameter int unsigned AccW = 32
) (
  input  logic [Cols*AccW-1:0] acc_i,
  input  logic [Cols*96-1:0]   params_i,  // per column: bias [31:0], multiplier [63:32], shift [69:64]
  input  logic                 relu_i,
  input  logic                 int32_i,
  output logic [Cols*32-1:0]   out_o      // INT32: column c at [32c +: 32]; INT8: at [8c +: 8]
);

  localparam int unsigned WideW = 66;

  if (AccW != 32) begin : g_bad_accw
    $error("nmsa_epilogue: the epilogue is defined for 32-bit accumulators");
  end

  logic signed [WideW-1:0] sum    [Cols];
  logic signed [WideW-1:0] prod   [Cols];
  logic signed [WideW-1:0] shifted[Cols];
  logic        [5:0]       shift  [Cols];
  logic signed [31:0]      wrap32 [Cols];
  logic signed [7:0]       sat8   [Cols];

  always_comb begin
    out_o = '0;
    for (int unsigned c = 0; c < Cols; c++) begin
      shift[c]   = params_i[c*96 + 64 +: 6];
      sum[c]     = WideW'($signed(acc_i[c*AccW +: AccW])) + WideW'($signed(params_i[c*96 +: 32]));
      prod[c]    = sum[c] * WideW'($signed(params_i[c*96 + 32 +: 32]));
      if (shift[c] != 6'd0) begin
        prod[c] = prod[c] + (WideW'(1) <<< (shift[c] - 6'd1));
      end
      shifted[c] = prod[c] >>> shift[c];
      if (shifted[c] > WideW'(127)) begin
        sat8[c] = 8'sd127;
      end else if (shifted[c] < -WideW'(128)) begin
        sat8[c] = -8'sd128;
      end else begin
        sat8[c] = shifted[c][7:0];
      end
      wrap32[c] = sum[c][31:0];

      if (int32_i) begin
        out_o[c*32 +: 32] = (relu_i && wrap32[c] < 0) ? 32'd0 : wrap32[c];
      end else begin
        out_o[c*8 +: 8] = (relu_i && sat8[c] < 0) ? 8'd0 : sat8[c];
      end
    end
  end

endmodule

`default_nettype wire
