// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Reset synchronizer: asserts asynchronously (rst_ni low resets at once, clock or not) and
// deasserts on the second clock edge after rst_ni rises, so that every flip-flop of the design
// leaves reset in the same cycle, whatever the timing of the board's reset source.
`default_nettype none

module nmsa_reset_sync (
  input  logic clk_i,
  input  logic rst_ni,   // asynchronous
  output logic rst_no    // asynchronous assertion, synchronous release
);

  logic [1:0] sync_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      sync_q <= '0;
    end else begin
      sync_q <= {sync_q[0], 1'b1};
    end
  end

  assign rst_no = sync_q[1];

endmodule

`default_nettype wire
