// Package invitro computes the distribution of a chemical in an in-vitro test
// system: the Armitage et al. (2014) equilibrium mass balance as implemented in
// httk 2.7 (armitage_eval: medium water, serum albumin and lipid, cells,
// plastic, headspace; ionisation at the cell pH, anionic membrane lipids, ion
// and lysosomal trapping), the default well geometries of httk's well_param
// table, and first-order uptake kinetics towards that equilibrium.
//
// Units follow httk: concentrations in µM (µmol/L), volumes in L, amounts in
// µmol, surface areas in m². All functions are pure Go and build for
// GOOS=wasip1.
//
// References: Armitage JM, Wania F, Arnot JA (2014) Environ Sci Technol
// 48:9770–9779; Honda GS et al. (2019) PLoS One 14:e0217564; httk 2.7
// (R/armitage.R, R/parameterize_armitage.R, R/calc_ionization.R);
// Trapp S (2004) Environ Sci Pollut Res 11:33–39 (membrane permeability).
package invitro
