// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// N:M metadata decoder. A group of M consecutive K-positions keeps N values; the metadata holds
// their N indices, slot j in bits [j*IdxW +: IdxW], in strictly increasing order. For 2:4 this is
// the 4-bit nibble idx_lo | idx_hi << 2 of NVIDIA's sparse tensor cores and PyTorch's
// _sparse_semi_structured_from_dense. See docs/format.md.
//
// Output: one one-hot select of M bits per slot (the PE's activation mux) and a legality flag.
// A code whose indices are not strictly increasing is illegal: legal_o is low and every select is
// zero, so nothing is ever computed from it. In dense mode the metadata is ignored and slot j
// selects position j (N consecutive K-positions per PE).
`default_nettype none

module nmsa_meta_decoder #(
  parameter int unsigned N = 2,
  parameter int unsigned M = 4
) (
  input  logic [N*$clog2(M)-1:0] meta_i,
  input  logic                   dense_i,
  output logic [N*M-1:0]         sel_o,
  output logic                   legal_o
);

  localparam int unsigned IdxW = $clog2(M);

  // Elaboration-time checks of the legal parameter range.
  if (M < 2 || (1 << IdxW) != M) begin : g_bad_m
    $error("nmsa_meta_decoder: M must be a power of two >= 2");
  end
  if (N < 1 || N > M) begin : g_bad_n
    $error("nmsa_meta_decoder: N must be in [1, M]");
  end

  logic [IdxW-1:0] idx [N];
  logic            increasing;

  always_comb begin
    for (int unsigned j = 0; j < N; j++) begin
      idx[j] = meta_i[j*IdxW +: IdxW];
    end
    increasing = 1'b1;
    for (int unsigned j = 1; j < N; j++) begin
      if (idx[j] <= idx[j-1]) begin
        increasing = 1'b0;
      end
    end
  end

  always_comb begin
    sel_o   = '0;
    legal_o = dense_i | increasing;
    for (int unsigned j = 0; j < N; j++) begin
      if (dense_i) begin
        sel_o[j*M + j] = 1'b1;
      end else if (increasing) begin
        sel_o[j*M + 32'(idx[j])] = 1'b1;
      end
    end
  end

endmodule

`default_nettype wire
