// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// UART transmitter, 8N1, LSB first: takes a byte when idle (valid/ready) and sends start bit,
// eight data bits and stop bit, ClksPerBit clock cycles each. The line output is a register, so
// it never glitches.
`default_nettype none

module nmsa_uart_tx #(
  parameter int unsigned ClksPerBit = 16
) (
  input  logic       clk_i,
  input  logic       rst_ni,

  input  logic       valid_i,
  output logic       ready_o,
  input  logic [7:0] data_i,

  output logic       tx_o
);

  if (ClksPerBit < 4) begin : g_bad_clks
    $error("nmsa_uart_tx: ClksPerBit must be at least 4");
  end

  localparam int unsigned CntW = $clog2(ClksPerBit);
  localparam logic [CntW-1:0] FullBit = CntW'(ClksPerBit - 1);

  // The frame shifts out of frame_q[0]; bits_q counts the bits still to send (0: idle).
  logic [9:0]      frame_d, frame_q;
  logic [3:0]      bits_d, bits_q;
  logic [CntW-1:0] cnt_d, cnt_q;

  assign ready_o = bits_q == '0;

  always_comb begin
    frame_d = frame_q;
    bits_d  = bits_q;
    cnt_d   = cnt_q;
    if (bits_q == '0) begin
      if (valid_i) begin
        frame_d = {1'b1, data_i, 1'b0};
        bits_d  = 4'd10;
        cnt_d   = '0;
      end
    end else if (cnt_q == FullBit) begin
      frame_d = {1'b1, frame_q[9:1]};
      bits_d  = bits_q - 1'b1;
      cnt_d   = '0;
    end else begin
      cnt_d = cnt_q + 1'b1;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      frame_q <= '1;
      bits_q  <= '0;
      cnt_q   <= '0;
    end else begin
      frame_q <= frame_d;
      bits_q  <= bits_d;
      cnt_q   <= cnt_d;
    end
  end

  // Idle (and the stop bit) is high: frame_q holds ones once the byte has shifted out.
  assign tx_o = frame_q[0];

endmodule

`default_nettype wire
