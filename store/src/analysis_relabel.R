# analysis_relabel.R: the permutation test of annotator labels for the bundle's analysis.R (which
# reads this file from beside itself): the relabelling designs, their p and their inversion.

# Every assignment of n units to groups of `sizes` (a row each, the group of each unit), built
# scenario by scenario from combn; kept per design, as studies share their designs.
deals <- new.env()
deal_labels <- function(sizes) {
  key <- paste(sizes, collapse = ",")
  if (!is.null(deals[[key]])) return(deals[[key]])
  n <- sum(sizes)
  rows <- matrix(0L, 1, n)
  for (g in seq_along(sizes)[-length(sizes)]) {
    free <- matrix(apply(rows, 1, function(r) which(r == 0L)), nrow(rows), byrow = TRUE)
    picks <- combn(ncol(free), sizes[g])
    i <- rep(seq_len(nrow(rows)), each = ncol(picks))
    j <- rep(seq_len(ncol(picks)), times = nrow(rows))
    rows <- rows[i, , drop = FALSE]
    for (e in seq_len(sizes[g])) rows[cbind(seq_along(i), free[cbind(i, picks[e, j])])] <- g
  }
  rows[rows == 0L] <- length(sizes)
  deals[[key]] <- rows
  rows
}

# The relabelling test of the contrast `w` of `groups` (annotator means per scenario), as
# domain::stats::relabel::contrast_relabel_test makes it: the units of the weighed groups, a
# matrix whose rows give each relabelling's statistic as a linear function of the units' scores
# (two groups of opposite weights: mean(b) - mean(a) over every choice of a's units; more:
# sum_g w_g mean_g over every deal), exact up to 2^22 relabellings, else the report's 9,999
# random ones remade from the row's `seed` (analysis_draws.R); the smallest reachable p; and
# each unit's shift per unit of the contrast (w_g / sum w^2).
relabel_design <- function(groups, w, seed) {
  keep <- w != 0
  if (sum(keep) < 2 || any(lengths(groups[keep]) == 0)) return(NULL)
  g <- groups[keep]
  wk <- w[keep]
  sizes <- lengths(g)
  n <- sum(sizes)
  pair <- length(g) == 2 && wk[1] == -wk[2]
  coef <- if (pair) c(-1 / sizes[1], 1 / sizes[2]) else wk / sizes
  group <- rep(seq_along(g), sizes)
  ways <- if (pair) choose(n, sizes[1]) else
    prod(sapply(seq_along(sizes), function(i) choose(sum(sizes[1:i]), sizes[i])))
  exact <- ways <= exact_limit && n < 64
  labels <- if (!exact) {
    seeded_labels(sizes, pair, seed, resamples)
  } else if (pair) {
    idx <- combn(n, sizes[1])
    l <- matrix(2L, ncol(idx), n)
    l[cbind(rep(seq_len(ncol(idx)), each = sizes[1]), as.vector(idx))] <- 1L
    l
  } else {
    deal_labels(sizes)
  }
  m <- matrix(coef[labels], nrow(labels))
  min_p <- if (!exact) 1 / (resamples + 1) else if (pair) {
    min(1, (if (sizes[1] == sizes[2]) 2 else 1) / ways)
  } else {
    # Generic scores tie only through the contrast's symmetries (as the report counts them).
    generic <- abs(as.vector(m %*% log(seq_len(n) + 1)))
    top <- max(generic)
    sum(generic >= top - 1e-9 * max(top, 1)) / ways
  }
  list(x = unlist(g), coef = coef[group], m = m, exact = exact, min_p = min_p,
       shift = (wk / sum(w^2))[group], estimate = sum(wk * sapply(g, mean)),
       scale = max(1, diff(range(unlist(groups)))), norm = sqrt(sum(w^2)))
}

# The design's two-sided p of the contrast shifted by `delta` (the units of group g less
# delta * w_g / sum w^2): the share of relabellings at least as far from zero as the observed.
relabel_p <- function(d, delta = 0) {
  x <- d$x - delta * d$shift
  observed <- sum(d$coef * x)
  bar <- abs(observed) - 1e-12 * max(abs(observed), 1)
  hits <- sum(abs(as.vector(d$m %*% x)) >= bar)
  if (d$exact) hits / nrow(d$m) else (hits + 1) / (nrow(d$m) + 1)
}

# The permutation test's interval, as domain::stats::relabel_interval::shift_interval finds
# it: from the estimate outwards by doubling steps until a shift is rejected (p <= alpha), then
# bisection to 1e-10 of the scale; NULL where the design cannot reach alpha (no shift rejected).
shift_interval <- function(d, alpha) {
  if (d$min_p > alpha) return(NULL)
  end <- function(direction) {
    inside <- d$estimate
    step <- d$scale * max(d$norm, 1e-12)
    outside <- NA
    for (i in 1:60) {
      x <- d$estimate + direction * step
      if (relabel_p(d, x) <= alpha) {
        outside <- x
        break
      }
      inside <- x
      step <- step * 2
    }
    while (abs(outside - inside) > 1e-10 * d$scale) {
      mid <- 0.5 * (inside + outside)
      if (relabel_p(d, mid) <= alpha) outside <- mid else inside <- mid
    }
    0.5 * (inside + outside)
  }
  c(end(-1), end(1))
}
