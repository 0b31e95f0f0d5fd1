// Package health decides whether a structure has changed: a statistical
// control chart on a certified quantity (a mode's natural frequency or
// damping ratio), its limits learned from the quantity's own history.
//
// A structure's frequency moves with its environment — a bridge's by
// 1–2 % a day with temperature — while a 1 % loss of stiffness-driven
// frequency is already serious damage, so no fixed percentage both stays
// quiet and catches it. As structural-health monitoring does (the
// KW51 and Lysefjord bridge studies), the chart first learns a baseline:
// over a configured period, the quantity's interval means are regressed
// on the environment's covariates (a constant and linear terms; squares
// and products by name), and the regression's residual scatter sets the
// scale. It then runs an exponentially weighted moving average of the
// standardised residual,
//
//	z_k = (y_k − ŷ(c_k)) / s,   Z_k = λ·clip(z_k) + (1 − λ) Z_{k−1},
//
// (z clipped at twice the alarm level: a long alarm does not wind the
// average up)
// and alarms when |Z| stays beyond L times the spread Z had over the
// baseline for Consecutive points, and clears when it stays within
// Clear times that spread as long. The spread is measured, not assumed:
// residuals that are not white (a daily cycle no covariate explains, the
// overlap of successive windows) widen it as much as they widen Z's own
// swings, so the false-alarm rate stays what the limit says.
package health
