// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Formal harness for nmsa_meta_decoder: its inputs are free (module inputs of the top), so the
// solver considers every metadata code in sparse and in dense mode. The expected behaviour is
// written from the specification, not copied from the implementation: legality is checked
// pairwise over all slot pairs a < b (the decoder compares neighbours), and the selects are
// compared bit by bit with the one-hot of each slot's index.
//
// Properties (docs/format.md):
//   (a) sparse, indices pairwise strictly increasing: legal_o = 1; slot j's M-bit select is
//       one-hot with its set bit at slot j's index (in range); no two slots select the same
//       position.
//   (b) sparse, any other code: legal_o = 0 and every select is zero.
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

  logic [N*M-1:0] dut_sel;
  logic           dut_legal;

  nmsa_meta_decoder #(
    .N (N),
    .M (M)
  ) u_dut (
    .meta_i  (meta_i),
    .dense_i (dense_i),
    .sel_o   (dut_sel),
    .legal_o (dut_legal)
  );

  // ---------------------------------------------------------------------------------------------
  // Reference: legality over all pairs, and the one-hot of each slot's index.
  // ---------------------------------------------------------------------------------------------
  logic           ref_increasing;
  logic [N*M-1:0] ref_onehot;    // slot j's index as one-hot, ignoring legality and dense mode

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

  always_comb begin
    ref_onehot = '0;
    for (int unsigned j = 0; j < N; j++) begin
      for (int unsigned m = 0; m < M; m++) begin
        ref_onehot[j*M + m] = (meta_i[j*IdxW +: IdxW] == IdxW'(m));
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Outputs seen by the checker: the decoder's, or a mutant's (self-test only).
  // ---------------------------------------------------------------------------------------------
  logic [N*M-1:0] sel;
  logic           legal;

  always_comb begin
    sel   = dut_sel;
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
      // Does not zero the selects of an illegal code: breaks (b).
      2: begin
        if (!dense_i && !dut_legal) begin
          sel = ref_onehot;
        end
      end
      // Ignores dense mode and decodes the metadata anyway: breaks (c).
      3: begin
        if (dense_i) begin
          sel = ref_onehot;
        end
      end
      // The last slot copies slot 0's select: two slots select the same position, breaks (a), (c).
      4: begin
        sel[(N-1)*M +: M] = dut_sel[0 +: M];
      end
      // The last slot can never select the last position: breaks (a).
      5: begin
        sel[N*M-1] = 1'b0;
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
        for (int unsigned m = 0; m < M; m++) begin
          assert (sel[j*M + m] == (m == j));
        end
      end
    end else if (ref_increasing) begin
      // (a)
      assert (legal);
      for (int unsigned j = 0; j < N; j++) begin
        // Always true while M is a power of two (the decoder checks that at elaboration); kept
        // so that a future non-power-of-two M cannot select past the group.
        assert (32'(meta_i[j*IdxW +: IdxW]) < M);
        assert ($onehot(sel[j*M +: M]));
        assert (sel[j*M +: M] == ref_onehot[j*M +: M]);
      end
      for (int unsigned a = 0; a < N; a++) begin
        for (int unsigned b = a + 1; b < N; b++) begin
          assert ((sel[a*M +: M] & sel[b*M +: M]) == '0);
        end
      end
    end else begin
      // (b)
      assert (!legal);
      assert (sel == '0);
    end
  end

endmodule

`default_nettype wire
