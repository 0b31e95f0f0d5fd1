// Package window knows time: which stretches of a trajectory can certify a
// unique answer. Its check is the paper's, applied to the learned latents:
//
//   - level-set slope coverage (Sec. 4, Def. "Level-set slope coverage"):
//     Coverage, in coverage.go;
//   - the design-conditioning lemma (App. "Design conditioning"):
//     Conditioning, in conditioning.go;
//   - the verdict that combines them with the fit's quality: Certify, in
//     verdict.go.
package window
