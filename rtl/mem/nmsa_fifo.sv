// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Synchronous FIFO with valid/ready on both sides (first-word fall-through). Depth must be a
// power of two. flush_i empties it (used by soft reset).
`default_nettype none

module nmsa_fifo #(
  parameter int unsigned Width = 8,
  parameter int unsigned Depth = 4
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             flush_i,

  input  logic             in_valid_i,
  output logic             in_ready_o,
  input  logic [Width-1:0] in_data_i,

  output logic             out_valid_o,
  input  logic             out_ready_i,
  output logic [Width-1:0] out_data_o,

  output logic [$clog2(Depth):0] count_o
);

  localparam int unsigned PtrW = $clog2(Depth);

  if (Depth < 2 || (1 << PtrW) != Depth) begin : g_bad_depth
    $error("nmsa_fifo: Depth must be a power of two >= 2");
  end

  logic [Width-1:0] mem_q [Depth];
  logic [PtrW:0]    wr_ptr_d, wr_ptr_q, rd_ptr_d, rd_ptr_q;
  logic             push, pop;

  assign count_o     = wr_ptr_q - rd_ptr_q;
  assign in_ready_o  = count_o != (PtrW+1)'(Depth);
  assign out_valid_o = count_o != '0;
  assign out_data_o  = mem_q[rd_ptr_q[PtrW-1:0]];
  assign push        = in_valid_i & in_ready_o;
  assign pop         = out_valid_o & out_ready_i;

  always_comb begin
    wr_ptr_d = wr_ptr_q;
    rd_ptr_d = rd_ptr_q;
    if (flush_i) begin
      wr_ptr_d = '0;
      rd_ptr_d = '0;
    end else begin
      if (push) wr_ptr_d = wr_ptr_q + 1'b1;
      if (pop)  rd_ptr_d = rd_ptr_q + 1'b1;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wr_ptr_q <= '0;
      rd_ptr_q <= '0;
    end else begin
      wr_ptr_q <= wr_ptr_d;
      rd_ptr_q <= rd_ptr_d;
    end
  end

  always_ff @(posedge clk_i) begin
    if (push) begin
      mem_q[wr_ptr_q[PtrW-1:0]] <= in_data_i;
    end
  end

endmodule

`default_nettype wire
