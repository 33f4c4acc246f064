// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// ULX3S 85F (LFE5U-85F, CABGA381): nmsa_board_core on the board's 25 MHz oscillator, its UART on
// the FT231X USB serial port, status on LEDs 0-3, FIRE1 as reset. Pins: constraints/ulx3s.lpf.
// Build: make board BOARD=ulx3s (docs/fpga.md).
`default_nettype none

module nmsa_ulx3s_top #(
  // The accelerator's configuration; syn/board.sh sets it from rtl/configs.json (CONFIG=).
  parameter int unsigned Rows       = 4,
  parameter int unsigned Cols       = 4,
  parameter int unsigned N          = 2,
  parameter int unsigned M          = 4,
  parameter int unsigned DataW      = 8,
  parameter int unsigned AccW       = 32,
  parameter int unsigned AxiDataW   = 64,
  parameter int unsigned ActEntries = 256,
  parameter int unsigned WgtRecords = 64,
  parameter int unsigned EpiEntries = 16,
  parameter int unsigned AccEntries = 256
) (
  input  logic       clk_25mhz_i,   // on-board oscillator
  input  logic       ftdi_txd_i,    // FT231X TXD: bytes from the host
  output logic       ftdi_rxd_o,    // FT231X RXD: bytes to the host
  input  logic       btn_fire1_i,   // FIRE1, high while pressed
  output logic [7:0] led_o,
  output logic       wifi_gpio0_o
);

  // The core clock is the oscillator itself, without a PLL: this is the one place that states
  // its frequency. A PLL (EHXPLLL) would go here, with ClkHz its output frequency.
  localparam int unsigned ClkHz = 25_000_000;
  // 25 clock cycles a bit. The FT231X divides 3 MHz by an integer, so 1 Mbaud is exact on both
  // sides of the cable.
  localparam int unsigned Baud  = 1_000_000;

  if (ClkHz % Baud != 0) begin : g_bad_baud
    $error("nmsa_ulx3s_top: the baud rate must divide the clock frequency");
  end

  // Power-on reset: flip-flops start at their initial values after configuration, so the core
  // is held in reset for the first 15 cycles, and again while FIRE1 is pressed.
  logic [3:0] por_d;
  logic [3:0] por_q = '0;
  logic       rst_n;

  assign por_d = &por_q ? por_q : por_q + 1'b1;

  // The button is asynchronous to the clock: the core sees its release on a clock edge.
  nmsa_reset_sync u_reset_sync (
    .clk_i  (clk_25mhz_i),
    .rst_ni (&por_q && !btn_fire1_i),
    .rst_no (rst_n)
  );

  always_ff @(posedge clk_25mhz_i) begin
    por_q <= por_d;
  end

  logic [3:0] status;

  nmsa_board_core #(
    .Rows        (Rows),
    .Cols        (Cols),
    .N           (N),
    .M           (M),
    .DataW       (DataW),
    .AccW        (AccW),
    .AxiDataW    (AxiDataW),
    .ActEntries  (ActEntries),
    .WgtRecords  (WgtRecords),
    .EpiEntries  (EpiEntries),
    .AccEntries  (AccEntries),
    .ClkHz       (ClkHz),
    .ClksPerBit  (ClkHz / Baud),
    .TimeoutClks (ClkHz / 50),
    .MemBase     (32'h1000_0000),
    .MemBytes    (131072),
    .MaxPayload  (1024)
  ) u_core (
    .clk_i     (clk_25mhz_i),
    .rst_ni    (rst_n),
    .uart_rx_i (ftdi_txd_i),
    .uart_tx_o (ftdi_rxd_o),
    .led_o     (status)
  );

  assign led_o = {4'b0000, status};

  // The on-board ESP32 boots its own firmware only with GPIO0 high; low would put it into its
  // serial bootloader, where it may drive the shared pins.
  assign wifi_gpio0_o = 1'b1;

endmodule

`default_nettype wire
