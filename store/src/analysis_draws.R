# analysis_draws.R: the report's seeded random draws made again in R, for the bundle's analysis.R
# (which reads this file from beside itself): the item bootstrap, the sign-flip test of item
# differences and the random relabellings of annotators, each from the seed scores.csv states.
#
# The report draws from SplitMix64 (domain/src/rng.rs): the i-th number of seed s is
# mix(s + i * 0x9E3779B97F4A7C15) mod 2^64, so R computes every number of a stream at once. R has
# no unsigned 64-bit integer: a number is four 16-bit limbs (a row of a matrix, lowest limb first),
# whose products (< 2^34) and sums stay exact in doubles.

limb_base <- 65536

# A 16-hex-digit seed as its four limbs, lowest first.
seed_limbs <- function(hex) {
  h <- paste0(strrep("0", 16 - nchar(hex)), hex)
  strtoi(substring(h, c(13, 9, 5, 1), c(16, 12, 8, 4)), 16L)
}

# The product mod 2^64 of each row of limbs `a` with the constant of limbs `k`.
limb_mul <- function(a, k) {
  out <- matrix(0, nrow(a), 4)
  carry <- 0
  for (j in 1:4) {
    s <- carry
    for (i in 1:j) s <- s + a[, i] * k[j - i + 1]
    out[, j] <- s %% limb_base
    carry <- s %/% limb_base
  }
  out
}

# z xor (z >> r), row by row.
xor_shift <- function(z, r) {
  q <- r %/% 16
  b <- r %% 16
  limb <- function(j) if (j <= 4) z[, j] else 0
  out <- z
  for (j in 1:4) {
    shifted <- limb(j + q) %/% 2^b + (limb(j + q + 1) %% 2^b) * 2^(16 - b)
    out[, j] <- bitwXor(as.integer(z[, j]), as.integer(shifted))
  }
  out
}

# Numbers `from + 1` to `from + n` of SplitMix64 from `seed` (hex): an n x 4 matrix of limbs.
splitmix <- function(seed, n, from = 0) {
  i <- from + seq_len(n)
  counter <- cbind(i %% limb_base, (i %/% limb_base) %% limb_base, i %/% limb_base^2, 0)
  z <- limb_mul(counter, strtoi(c("7C15", "7F4A", "79B9", "9E37"), 16L))
  s <- seed_limbs(seed)
  carry <- 0
  for (j in 1:4) {
    t <- z[, j] + s[j] + carry
    z[, j] <- t %% limb_base
    carry <- t %/% limb_base
  }
  z <- limb_mul(xor_shift(z, 30), strtoi(c("E5B9", "1CE4", "476D", "BF58"), 16L))
  z <- limb_mul(xor_shift(z, 27), strtoi(c("11EB", "1331", "49BB", "94D0"), 16L))
  xor_shift(z, 31)
}

# floor(u * m / 2^64) of each number (the report's Lemire index in the item bootstrap), 0-based.
lemire <- function(z, m) {
  carry <- 0
  for (j in 1:4) carry <- (z[, j] * m + carry) %/% limb_base
  carry
}

# u mod m of each number (SplitMix64::below), 0-based; `m` recycled over the rows.
below <- function(z, m) {
  r <- 0
  for (j in 4:1) r <- (r * limb_base + z[, j]) %% m
  r
}

# A sum in order, as Rust's iterator sums (R's sum() accumulates in long double).
ordered_sum <- function(x) Reduce(`+`, x, 0)

# The report's replicates of the item bootstrap (domain::stats::interval): each of `resamples`
# draws `items` indices, and a replicate is the mean over units of each unit's mean over the
# drawn items. `cells`: unit-by-item matrices over the same items; returns a matrix of
# replicates, a row per cell (the draws shared, as for a difference).
bootstrap_replicates <- function(cells, seed, resamples = 2000) {
  items <- ncol(cells[[1]])
  index <- lemire(splitmix(seed, items * resamples), items)
  counts <- matrix(tabulate(index + 1 + items * rep(seq_len(resamples) - 1, each = items),
                            items * resamples), items, resamples)
  t(sapply(cells, function(rows) colMeans(rows %*% counts / items)))
}

# The tails (percent) of the expanded percentile interval over m items at `level`.
expanded_tail <- function(m, level) {
  alpha <- 1 - level
  if (m < 2) return(100 * alpha / 2)
  100 * pnorm(-sqrt(m / (m - 1)) * qt(1 - alpha / 2, m - 1))
}

# The bootstrap interval of one cell (a matrix), or of the difference b - a of two.
bootstrap_interval <- function(cells, seed, level) {
  reps <- bootstrap_replicates(cells, seed)
  if (length(cells) == 2) reps <- reps[2, ] - reps[1, ] else reps <- as.vector(reps)
  tail <- expanded_tail(ncol(cells[[1]]), level)
  quantile(reps, c(tail, 100 - tail) / 100, type = 7, names = FALSE)
}

# The two-sided sign-flip test of mean(d) = 0 (domain::stats::paired::sign_flip_test): every
# sign pattern while 2^n <= resamples, else `resamples` random ones, the signs of item i from
# bit (i - 1) mod 64 of the resample's number (i - 1) %/% 64, summed by bytes as the report does.
sign_flip_p <- function(d, seed, resamples = 9999) {
  n <- length(d)
  observed <- ordered_sum(d) / n
  gamma <- abs(observed * .Machine$double.eps * 100)
  if (n < 64 && 2^n <= resamples) {
    patterns <- seq_len(2^n) - 1
    s <- 0
    for (i in seq_len(n)) s <- s + ifelse((patterns %/% 2^(i - 1)) %% 2 == 1, -d[i], d[i])
    t <- s / n
    return(min(1, 2 * min(mean(t <= observed + gamma), mean(t >= observed - gamma))))
  }
  words <- ceiling(n / 64)
  z <- splitmix(seed, words * resamples)
  flipped <- 0
  for (g in seq_len(ceiling(n / 8))) {
    number <- seq((g - 1) %/% 8 + 1, by = words, length.out = resamples)
    part <- 0
    for (i in (8 * (g - 1) + 1):min(8 * g, n)) {
      bit <- (i - 1) %% 64
      on <- (z[number, bit %/% 16 + 1] %/% 2^(bit %% 16)) %% 2 == 1
      part <- part + ifelse(on, d[i], 0)
    }
    flipped <- flipped + part
  }
  t <- (ordered_sum(d) - 2 * flipped) / n
  r <- resamples + 1
  min(1, 2 * min((sum(t <= observed + gamma) + 1) / r, (sum(t >= observed - gamma) + 1) / r))
}

# The report's random relabellings (domain::stats::relabel), a row each: the group of each unit
# (units in the order of the groups). Two groups of opposite weights: a partial shuffle of the
# units' indices (kept from one relabelling to the next) whose first n_a are group 1; more: a
# full Fisher-Yates shuffle of the labels (kept too).
seeded_labels <- function(sizes, pair, seed, draws = 9999) {
  n <- sum(sizes)
  per <- if (pair) sizes[1] else n - 1
  m <- if (pair) n - seq_len(sizes[1]) + 1 else n - seq_len(n - 1) + 1
  j <- below(splitmix(seed, per * draws), rep(m, draws)) + 1
  out <- matrix(0L, draws, n)
  if (pair) {
    idx <- seq_len(n)
    at <- 0
    for (r in seq_len(draws)) {
      for (i in seq_len(sizes[1])) {
        k <- i - 1 + j[at + i]
        swap <- idx[i]
        idx[i] <- idx[k]
        idx[k] <- swap
      }
      at <- at + per
      out[r, ] <- 2L
      out[r, idx[seq_len(sizes[1])]] <- 1L
    }
    return(out)
  }
  labels <- rep(seq_along(sizes), sizes)
  at <- 0
  for (r in seq_len(draws)) {
    for (s in seq_len(n - 1)) {
      i <- n - s + 1
      k <- j[at + s]
      swap <- labels[i]
      labels[i] <- labels[k]
      labels[k] <- swap
    }
    at <- at + per
    out[r, ] <- labels
  }
  out
}

# A cell's unit-by-item matrix of scores from the rows of `x` (assignment_id, example_id, score):
# a row per annotator and a column per item every one of them answered, both ascending, as the
# report's (domain::report::inference::Matrix).
cell_matrix <- function(x) {
  answered <- table(x$example_id) == length(unique(x$assignment_id))
  x <- x[x$example_id %in% as.integer(names(answered)[answered]), ]
  tapply(x$score, list(factor(x$assignment_id), factor(x$example_id)), sum)
}

# Each item's mean over the units, summed in the units' order as the report does.
item_means <- function(m) Reduce(`+`, lapply(seq_len(nrow(m)), function(r) m[r, ]), 0) / nrow(m)

# The item bootstrap's interval of a cell of `table` (Table 5's, a system's) over more items
# (more_items_low/high) from the row's seed.
check_more_items <- function(what, m, row, table = "table5") {
  if (is.na(row$more_items_low) || !nzchar(row$seed)) return(invisible())
  ends <- bootstrap_interval(list(m), row$seed, as.numeric(row$level))
  compare(paste(what, "more items low"), paste(table, "more_items_low"), ends[1],
          row$more_items_low, within = 1e-9)
  compare(paste(what, "more items high"), paste(table, "more_items_high"), ends[2],
          row$more_items_high, within = 1e-9)
}

# These units on more items, `b` against `a` (matrices over the same items): the sign-flip
# test of the item differences (items_p) and the item bootstrap of the difference at the row's
# level (more_items_low/high), from the row's seed; `variant` after each kind's column.
check_item_level <- function(what, a, b, row, variant = "") {
  compare(paste(what, "items_p (sign flip)"), paste0("items_p", variant),
          sign_flip_p(item_means(b) - item_means(a), row$seed), row$items_p)
  ends <- bootstrap_interval(list(a, b), row$seed, as.numeric(row$level))
  compare(paste(what, "more items low"), paste0("more_items_low", variant), ends[1],
          row$more_items_low, within = 1e-9)
  compare(paste(what, "more items high"), paste0("more_items_high", variant), ends[2],
          row$more_items_high, within = 1e-9)
}
