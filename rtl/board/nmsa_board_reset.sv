// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// A board's reset: held for the first 15 clock cycles after the FPGA is configured (its
// flip-flops start at their initial values, which ECP5 and iCE40 configuration loads), and while
// rst_ni is low (a button, asynchronous to the clock). Asserts at once and releases on the
// second clock edge after the request goes away, so that every flip-flop of the design leaves
// reset in the same cycle.
`default_nettype none

module nmsa_board_reset (
  input  logic clk_i,
  input  logic rst_ni,   // asynchronous request, active low
  output logic rst_no    // asynchronous assertion, release synchronous to clk_i
);

  logic [3:0] por_d;
  logic [3:0] por_q = '0;
  logic       request_n;
  logic [1:0] sync_q;

  assign por_d     = &por_q ? por_q : por_q + 1'b1;
  assign request_n = &por_q && rst_ni;

  always_ff @(posedge clk_i) begin
    por_q <= por_d;
  end

  always_ff @(posedge clk_i or negedge request_n) begin
    if (!request_n) begin
      sync_q <= '0;
    end else begin
      sync_q <= {sync_q[0], 1'b1};
    end
  end

  assign rst_no = sync_q[1];

endmodule

`default_nettype wire
