// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Formal harness for nmsa_meta_decoder: its inputs are free (module inputs of the top), so the
// solver considers every metadata code in sparse and in dense mode. The expected behaviour is
// written from the specification, not copied from the implementation: legality is checked
// pairwise over all slot pairs a < b (the decoder compares neighbours), and each slot's position
// is compared with its field of the metadata.
//
// Properties (docs/format.md):
//   (a) sparse, indices pairwise strictly increasing: legal_o = 1; slot j's position is slot j's
//       index (in range); no two slots select the same position.
//   (b) sparse, any other code: legal_o = 0 (whatever the positions, every result computed with
//       the code is poisoned by the PE).
//   (c) dense: legal_o = 1 and slot j selects position j, whatever the metadata.
//
// Mutant != 0 replaces the outputs the checker sees with those of a deliberately broken decoder
// (scripts/formal.sh --selftest), to show that each property can fail. Mutant 0 is the real
// proof. Yosys 0.23 reads no concurrent assertions, hence immediate asserts in always_comb.
`default_nettype none

module nmsa_meta_decoder_fv #(
  parameter int unsigned N      = 2,
  parameter int unsigned M      = 4,
  parameter int unsigned Mutant = 0
) (
  input logic [N*$clog2(M)-1:0] meta_i,
  input logic                   dense_i
);

  localparam int unsigned IdxW = $clog2(M);

  logic [N*IdxW-1:0] dut_idx;
  logic              dut_legal;

  nmsa_meta_decoder #(
    .N (N),
    .M (M)
  ) u_dut (
    .meta_i  (meta_i),
    .dense_i (dense_i),
    .idx_o   (dut_idx),
    .legal_o (dut_legal)
  );

  // ---------------------------------------------------------------------------------------------
  // Reference: legality over all pairs.
  // ---------------------------------------------------------------------------------------------
  logic ref_increasing;

  always_comb begin
    ref_increasing = 1'b1;
    for (int unsigned a = 0; a < N; a++) begin
      for (int unsigned b = a + 1; b < N; b++) begin
        if (meta_i[a*IdxW +: IdxW] >= meta_i[b*IdxW +: IdxW]) begin
          ref_increasing = 1'b0;
        end
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Outputs seen by the checker: the decoder's, or a mutant's (self-test only).
  // ---------------------------------------------------------------------------------------------
  logic [N*IdxW-1:0] idx;
  logic              legal;

  always_comb begin
    idx   = dut_idx;
    legal = dut_legal;
    unique case (Mutant)
      // Accepts a repeated index (compares with < instead of <=): breaks (b).
      1: begin
        for (int unsigned j = 1; j < N; j++) begin
          if (meta_i[j*IdxW +: IdxW] == meta_i[(j-1)*IdxW +: IdxW]) begin
            legal = 1'b1;
          end
        end
      end
      // Calls every sparse code legal: breaks (b).
      2: begin
        if (!dense_i) begin
          legal = 1'b1;
        end
      end
      // Ignores dense mode and decodes the metadata anyway: breaks (c).
      3: begin
        if (dense_i) begin
          idx = meta_i;
        end
      end
      // The last slot copies slot 0's position: two slots select the same position, breaks (a),
      // (c).
      4: begin
        idx[(N-1)*IdxW +: IdxW] = dut_idx[0 +: IdxW];
      end
      // The last slot can never select the last position: breaks (a).
      5: begin
        if (idx[(N-1)*IdxW +: IdxW] == IdxW'(M - 1)) begin
          idx[(N-1)*IdxW +: IdxW] = IdxW'(M - 2);
        end
      end
      default: begin
      end
    endcase
  end

  // ---------------------------------------------------------------------------------------------
  // Properties
  // ---------------------------------------------------------------------------------------------
  always_comb begin
    if (dense_i) begin
      // (c)
      assert (legal);
      for (int unsigned j = 0; j < N; j++) begin
        assert (32'(idx[j*IdxW +: IdxW]) == j);
      end
    end else if (ref_increasing) begin
      // (a)
      assert (legal);
      for (int unsigned j = 0; j < N; j++) begin
        // Always true while M is a power of two (the decoder checks that at elaboration); kept
        // so that a future non-power-of-two M cannot select past the group.
        assert (32'(idx[j*IdxW +: IdxW]) < M);
        assert (idx[j*IdxW +: IdxW] == meta_i[j*IdxW +: IdxW]);
      end
      for (int unsigned a = 0; a < N; a++) begin
        for (int unsigned b = a + 1; b < N; b++) begin
          assert (idx[a*IdxW +: IdxW] != idx[b*IdxW +: IdxW]);
        end
      end
    end else begin
      // (b)
      assert (!legal);
    end
  end

endmodule

`default_nettype wire
