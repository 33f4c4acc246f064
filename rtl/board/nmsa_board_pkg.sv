// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Constants of the UART bridge protocol (docs/fpga.md, "The protocol"). The host side has the
// same values in sw/device/include/nmsa/uart_bridge.hpp; a test compares the two.
`default_nettype none

package nmsa_board_pkg;

  localparam logic [15:0] ProtocolVersion = 16'd1;

  // First byte of every request and of every response.
  localparam logic [7:0] ReqSync  = 8'hA5;
  localparam logic [7:0] RespSync = 8'h5A;

  // Commands (the second byte of a request).
  localparam logic [7:0] CmdPing     = 8'h01;
  localparam logic [7:0] CmdRegRead  = 8'h02;
  localparam logic [7:0] CmdRegWrite = 8'h03;
  localparam logic [7:0] CmdMemRead  = 8'h04;
  localparam logic [7:0] CmdMemWrite = 8'h05;

  // Response status. The two bus errors are ordered so that the worse one is the larger code.
  localparam logic [7:0] StatusOk        = 8'h00;
  localparam logic [7:0] StatusBadCrc    = 8'h01;  // CRC mismatch, or a UART framing error
  localparam logic [7:0] StatusBadCmd    = 8'h02;  // unknown command byte
  localparam logic [7:0] StatusBadLen    = 8'h03;  // length not allowed for the command
  localparam logic [7:0] StatusBadAddr   = 8'h04;  // range outside the CSRs or the memory window
  localparam logic [7:0] StatusTimeout   = 8'h05;  // the line went quiet in the middle of a frame
  localparam logic [7:0] StatusBusSlvErr = 8'h06;  // a CSR access answered SLVERR
  localparam logic [7:0] StatusBusDecErr = 8'h07;  // a CSR access answered DECERR

  // Bytes of the PING answer's payload.
  localparam int unsigned PingBytes = 24;

endpackage

`default_nettype wire
