// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Formal harness of nmsa_fifo (scripts/formal_fifo.sh), with its memory read asynchronously or
// (BlockRam) synchronously: the FIFO against a reference queue
// written here, under every input sequence the solver finds (push, pop, flush and data free in
// every cycle, reset in the first). Checked in every cycle after reset:
//   - out_valid_o is 1 exactly when the reference holds an entry, in_ready_o when it is not full,
//     and count_o is its fill level;
//   - while out_valid_o, out_data_o is the reference's oldest entry (order, no loss, no
//     duplicate);
// together with the FIFO's own assertions (its registered flags and head copy against its count
// and memory). Mutant (default 0) corrupts the FIFO's outputs as the harness sees them; every
// mutant must make a property fail (scripts/formal_fifo.sh --selftest).
`default_nettype none

module nmsa_fifo_fv #(
  parameter int unsigned Depth    = 4,
  parameter bit          BlockRam = 1'b0,
  parameter int unsigned Mutant   = 0
) (
  input logic       clk_i,
  input logic       rst_ni,
  input logic       flush_i,
  input logic       in_valid_i,
  input logic [3:0] in_data_i,
  input logic       out_ready_i
);
  localparam int unsigned Width = 4;
  localparam int unsigned PtrW  = $clog2(Depth);

  logic             in_ready, out_valid;
  logic [Width-1:0] out_data;
  logic [PtrW:0]    count;

  nmsa_fifo #(.Width(Width), .Depth(Depth), .BlockRam(BlockRam)) dut (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .flush_i     (flush_i),
    .in_valid_i  (in_valid_i),
    .in_ready_o  (in_ready),
    .in_data_i   (in_data_i),
    .out_valid_o (out_valid),
    .out_ready_i (out_ready_i),
    .out_data_o  (out_data),
    .count_o     (count)
  );

  // The outputs as the properties see them: the FIFO's, or a mutant's.
  logic             in_ready_m, out_valid_m;
  logic [Width-1:0] out_data_m;
  logic [PtrW:0]    count_m;

  always_comb begin
    in_ready_m  = in_ready;
    out_valid_m = out_valid;
    out_data_m  = out_data;
    count_m     = count;
    case (Mutant)
      1: in_ready_m  = 1'b1;                                    // takes a push when full
      2: out_data_m  = out_data ^ {{(Width - 1){1'b0}}, count == (PtrW + 1)'(2)};
      3: out_valid_m = out_valid & (count != (PtrW + 1)'(Depth)); // hides the head when full
      4: count_m     = count == '0 ? count : count - 1'b1;      // off by one
      default: ;
    endcase
  end

  // Reset in the first cycle only; afterwards flush_i is the way the queue empties at once.
  logic init_q = 1'b1;
  always @(posedge clk_i) init_q <= 1'b0;
  always @* assume (rst_ni == !init_q);

  // The reference queue.
  logic [Width-1:0] ref_q [Depth];
  logic [PtrW-1:0]  ref_rd_q, ref_wr_q;
  logic [PtrW:0]    ref_count_q;
  logic             push, pop;

  assign push = in_valid_i && in_ready_m;
  assign pop  = out_valid_m && out_ready_i;

  always @(posedge clk_i) begin
    if (!rst_ni || flush_i) begin
      ref_rd_q    <= '0;
      ref_wr_q    <= '0;
      ref_count_q <= '0;
    end else begin
      if (push) begin
        ref_q[ref_wr_q] <= in_data_i;
        ref_wr_q        <= ref_wr_q + 1'b1;
      end
      if (pop) ref_rd_q <= ref_rd_q + 1'b1;
      ref_count_q <= ref_count_q + (PtrW + 1)'(push) - (PtrW + 1)'(pop);
    end
  end

  always @* begin
    if (!init_q) begin
      assert (out_valid_m == (ref_count_q != '0));
      assert (in_ready_m == (ref_count_q != (PtrW + 1)'(Depth)));
      assert (count_m == ref_count_q);
      if (out_valid_m) assert (out_data_m == ref_q[ref_rd_q]);
    end
  end
endmodule

`default_nettype wire
