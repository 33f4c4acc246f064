// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Register slice for one valid/ready channel (an AXI channel, say): two registers, so that
// valid, data and ready on both sides come from flip-flops and the channel still moves one beat
// per cycle. A beat taken in cycle t is offered from cycle t+1; a stalled output keeps its beat
// and the slice takes one more before in_ready_o falls.
//
// Register A takes the input; when the output stalls, A's beat moves to register B, which is
// always the older one and is offered first. in_ready_o has a flip-flop of its own, loaded with
// the value the two full flags will give, so that the placer can put it beside the producer it
// feeds instead of beside the slice.
`default_nettype none

module nmsa_reg_slice #(
  parameter int unsigned Width = 8
) (
  input  logic             clk_i,
  input  logic             rst_ni,

  input  logic             in_valid_i,
  output logic             in_ready_o,
  input  logic [Width-1:0] in_data_i,

  output logic             out_valid_o,
  input  logic             out_ready_i,
  output logic [Width-1:0] out_data_o
);

  logic             a_full_q, b_full_q, in_ready_q;
  logic             a_full_d, b_full_d;
  logic [Width-1:0] a_data_q, b_data_q;
  logic             a_fill, a_drain, b_fill, b_drain;

  assign a_fill  = in_valid_i & in_ready_o;
  assign a_drain = a_full_q & ~b_full_q;
  assign b_fill  = a_drain & ~out_ready_i;
  assign b_drain = b_full_q & out_ready_i;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      a_full_q   <= 1'b0;
      b_full_q   <= 1'b0;
      in_ready_q <= 1'b1;
    end else begin
      a_full_q   <= a_full_d;
      b_full_q   <= b_full_d;
      in_ready_q <= ~a_full_d | ~b_full_d;
    end
  end

  assign a_full_d = (a_fill || a_drain) ? a_fill : a_full_q;
  assign b_full_d = (b_fill || b_drain) ? b_fill : b_full_q;

  always_ff @(posedge clk_i) begin
    if (a_fill) a_data_q <= in_data_i;
    if (b_fill) b_data_q <= a_data_q;
  end

  assign in_ready_o  = in_ready_q;
  assign out_valid_o = a_full_q | b_full_q;
  assign out_data_o  = b_full_q ? b_data_q : a_data_q;

`ifndef SYNTHESIS
  // "if (rst_ni)" alone, with the rest nested: Yosys recognizes the asynchronous reset of a
  // checking process only in that form.
  always @(posedge clk_i or negedge rst_ni) begin
    if (rst_ni) begin
      // The ready flop is the full flags' value.
      assert (in_ready_q == (~a_full_q | ~b_full_q));
    end
  end
`endif

endmodule

`default_nettype wire
