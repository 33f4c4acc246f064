// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Project-wide constants. Configuration (array size, N:M, widths) is passed as module
// parameters from rtl/configs.json; this package holds only what every configuration shares.
`default_nettype none

package nmsa_pkg;

  // Defaults of the product configuration: 2:4 sparsity, INT8 operands, INT32 accumulation.
  parameter int unsigned DefaultN     = 2;
  parameter int unsigned DefaultM     = 4;
  parameter int unsigned DefaultDataW = 8;
  parameter int unsigned DefaultAccW  = 32;

  // Number of weight banks per PE: one computing, one loading (double buffering).
  parameter int unsigned NumWeightBanks = 2;

endpackage

`default_nettype wire
