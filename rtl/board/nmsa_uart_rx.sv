// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// UART receiver, 8N1, LSB first. The line is asynchronous to clk_i: two flip-flops synchronize
// it. Each bit is sampled once in its middle, ClksPerBit clock cycles apart, counted from the
// middle of the start bit. A start bit that is no longer low at its middle was a glitch and is
// dropped. A low stop bit is reported as a framing error with the byte, and the receiver then
// waits for the line to return high, so a held-low line (a break, an unplugged cable) gives one
// error, not a stream of zero bytes.
`default_nettype none

module nmsa_uart_rx #(
  parameter int unsigned ClksPerBit = 16
) (
  input  logic       clk_i,
  input  logic       rst_ni,
  input  logic       rx_i,

  output logic       valid_o,      // one cycle: data_o and frame_err_o hold a received byte
  output logic [7:0] data_o,
  output logic       frame_err_o
);

  if (ClksPerBit < 4) begin : g_bad_clks
    $error("nmsa_uart_rx: ClksPerBit must be at least 4");
  end

  localparam int unsigned CntW = $clog2(ClksPerBit);
  localparam logic [CntW-1:0] HalfBit = CntW'(ClksPerBit / 2 - 1);
  localparam logic [CntW-1:0] FullBit = CntW'(ClksPerBit - 1);

  typedef enum logic [2:0] {
    StIdle,
    StStart,
    StData,
    StStop,
    StWaitHigh
  } state_e;

  state_e          state_d, state_q;
  logic [1:0]      sync_q;
  logic            rx;
  logic [CntW-1:0] cnt_d, cnt_q;
  logic [2:0]      bit_d, bit_q;
  logic [7:0]      shift_d, shift_q;
  logic            valid_d, valid_q, err_d, err_q;

  assign rx = sync_q[1];

  always_comb begin
    state_d = state_q;
    cnt_d   = cnt_q + 1'b1;
    bit_d   = bit_q;
    shift_d = shift_q;
    valid_d = 1'b0;
    err_d   = err_q;
    unique case (state_q)
      StIdle: begin
        cnt_d = '0;
        if (!rx) state_d = StStart;
      end
      StStart: begin
        if (cnt_q == HalfBit) begin
          cnt_d   = '0;
          bit_d   = '0;
          state_d = rx ? StIdle : StData;
        end
      end
      StData: begin
        if (cnt_q == FullBit) begin
          cnt_d   = '0;
          shift_d = {rx, shift_q[7:1]};
          bit_d   = bit_q + 1'b1;
          if (bit_q == 3'd7) state_d = StStop;
        end
      end
      StStop: begin
        if (cnt_q == FullBit) begin
          valid_d = 1'b1;
          err_d   = !rx;
          state_d = rx ? StIdle : StWaitHigh;
        end
      end
      StWaitHigh: begin
        if (rx) state_d = StIdle;
      end
      default: state_d = StIdle;
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= StIdle;
      sync_q  <= 2'b11;
      cnt_q   <= '0;
      bit_q   <= '0;
      shift_q <= '0;
      valid_q <= 1'b0;
      err_q   <= 1'b0;
    end else begin
      state_q <= state_d;
      sync_q  <= {sync_q[0], rx_i};
      cnt_q   <= cnt_d;
      bit_q   <= bit_d;
      shift_q <= shift_d;
      valid_q <= valid_d;
      err_q   <= err_d;
    end
  end

  assign valid_o     = valid_q;
  assign data_o      = shift_q;
  assign frame_err_o = err_q;

endmodule

`default_nettype wire
