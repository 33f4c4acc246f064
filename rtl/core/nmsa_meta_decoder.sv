// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// N:M metadata decoder. A group of M consecutive K-positions keeps N values; the metadata holds
// their N indices, slot j in bits [j*IdxW +: IdxW], in strictly increasing order. For 2:4 this is
// the 4-bit nibble idx_lo | idx_hi << 2 of NVIDIA's sparse tensor cores and PyTorch's
// _sparse_semi_structured_from_dense. See docs/format.md.
//
// Output: the K-position each slot multiplies (the PE's activation mux select, binary) and a
// legality flag. A code whose indices are not strictly increasing is illegal: legal_o is low, and
// whatever the selects are, every partial sum computed with the code is poisoned (nmsa_pe), so no
// result is ever reported from it. In dense mode the metadata is ignored and slot j selects
// position j (N consecutive K-positions per PE).
`default_nettype none

module nmsa_meta_decoder #(
  parameter int unsigned N = 2,
  parameter int unsigned M = 4
) (
  input  logic [N*$clog2(M)-1:0] meta_i,
  input  logic                   dense_i,
  output logic [N*$clog2(M)-1:0] idx_o,
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

  logic increasing;

  always_comb begin
    increasing = 1'b1;
    for (int unsigned j = 1; j < N; j++) begin
      if (meta_i[j*IdxW +: IdxW] <= meta_i[(j-1)*IdxW +: IdxW]) begin
        increasing = 1'b0;
      end
    end
  end

  always_comb begin
    legal_o = dense_i | increasing;
    for (int unsigned j = 0; j < N; j++) begin
      idx_o[j*IdxW +: IdxW] = dense_i ? IdxW'(j) : meta_i[j*IdxW +: IdxW];
    end
  end

endmodule

`default_nettype wire
