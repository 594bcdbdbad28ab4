# analysis.R: reruns this bundle's inferential cells in R from the bundle's own CSVs, and prints
# each beside the value the report gave (scores.csv). Run it in the unpacked bundle:
#     Rscript analysis.R            (or: Rscript analysis.R path/to/bundle)
# It needs R with lme4 and lmerTest (Debian: apt-get install r-cran-lme4 r-cran-lmertest).
# It exits with status 1 when a cell differs from the report's beyond the tolerance below.
#
# What it reruns, for all finished annotators of the bundle (the "all" view, official scoring):
# - Table 5's interval over other annotators: the t-interval of the annotators' test S1 on the
#   logit scale, expit(logit(m) +- t(0.975, n - 1) * s / (sqrt(n) * m * (1 - m))).
# - Each study's declared family of scenario comparisons: one fit of
#   S1 ~ 0 + scenario + (1|annotator) + (1|item) by REML (lme4) on the test items every
#   annotator of every scenario of the study answered; each contrast tested with
#   Satterthwaite's degrees of freedom (lmerTest::contest1D). Where the fit puts the annotator
#   variance at zero, the report decides with the exact permutation test of annotator labels
#   and gives Welch's test across the annotators' mean scores for the interval: both are rerun
#   here, the permutation test where the contrast weighs two scenarios (a trend over three or
#   more unequally weighted scenarios is not). Which of the two paths was taken is checked too.
# - Where every item S1 of a study's family is 0 or 1 (a label task), the logistic mixed model
#   beside it: glmer(S1 ~ 0 + scenario + (1|annotator) + (1|item), family = binomial) by the
#   Laplace approximation, each contrast's log-odds difference, its SE (from glmer's vcov), the
#   Wald p against the normal (glmer's) and against t with the between-within degrees of
#   freedom (annotators less scenarios), as the report gives them; and the same contrast from
#   the restricted fit under the Laplace approximation (REML-Laplace, made here from lme4's
#   parts: reml_laplace below), its SE and p against t.
# Not rerun: the item bootstrap (its draws are the report's own), humans against systems (the
# systems' per-item scores are in predictions/, not in these CSVs).
suppressMessages({
  library(lme4)
  library(lmerTest)
})

args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args) > 0) args[1] else "."
tolerance <- 1e-4

annotations <- read.csv(file.path(dir, "annotations.csv"), stringsAsFactors = FALSE,
                        colClasses = c(answer = "character"))
scores <- read.csv(file.path(dir, "scores.csv"), stringsAsFactors = FALSE)

# A submitted skip scores 0, as in the report; items never submitted do not count.
test <- annotations[annotations$status == "finished" & annotations$phase == "test" &
                      annotations$submitted %in% c("true", TRUE), ]
test$score <- ifelse(test$skipped %in% c("true", TRUE), 0, test$s1)
test <- test[!is.na(test$score), ]

checked <- 0
differ <- 0
# Prints one cell: what R computed beside the report's value, and whether they agree.
compare <- function(what, r, report, relative = FALSE, within = tolerance) {
  report <- suppressWarnings(as.numeric(report))
  gap <- abs(r - report)
  if (relative) gap <- gap / max(1, abs(report))
  ok <- !is.na(gap) && gap <= within
  checked <<- checked + 1
  if (!ok) differ <<- differ + 1
  cat(sprintf("%-70s R %-14.8g report %-14.8g %s\n", substr(what, 1, 70), r, report,
              if (ok) "ok" else "DIFFERS"))
}

# Table 5: each cell's interval over other annotators.
cells <- scores[scores$table == "table5" & scores$annotators == "all" &
                  scores$scoring == "official", ]
for (i in seq_len(nrow(cells))) {
  cell <- cells[i, ]
  mine <- test[test$task == cell$task & test$k == cell$k, ]
  per <- tapply(mine$score, mine$assignment_id, mean)
  n <- length(per)
  m <- mean(per)
  name <- sprintf("%s k=%d", cell$task, cell$k)
  compare(paste(name, "mean"), m, cell$mean)
  s <- sd(per)
  if (n < 2 || is.na(cell$other_units_low) || m <= 0 || m >= 1 || s == 0) next
  half <- qt(0.975, n - 1) * s / (sqrt(n) * m * (1 - m))
  compare(paste(name, "interval low"), plogis(qlogis(m) - half), cell$other_units_low)
  compare(paste(name, "interval high"), plogis(qlogis(m) + half), cell$other_units_high)
}

# The scenarios' k of a comparison's label: "k=4 vs k=2" (b, a) or a trend's list.
label_ks <- function(label) as.integer(regmatches(label, gregexpr("(?<=k=)[0-9]+|(?<=, )[0-9]+",
                                                                  label, perl = TRUE))[[1]])

# The weights of a comparison over the scenarios present, as the report sets them.
weights <- function(label, present) {
  w <- rep(0, length(present))
  ks <- label_ks(label)
  if (startsWith(label, "linear trend")) {
    slope <- 10 * (ks - mean(ks)) / sum((ks - mean(ks))^2)
    w[match(ks, present)] <- slope
  } else {
    w[match(ks[1], present)] <- 1
    w[match(ks[2], present)] <- -1
  }
  w
}

# The two-sided permutation test of annotator labels between two groups of means: every
# relabelling while there are at most 2^22 of them (as the report), else `draws` random ones
# with the +1 correction (then R's p and the report's agree within their Monte Carlo error).
relabel_p <- function(a, b, draws = 20000) {
  all <- c(a, b)
  observed <- abs(mean(b) - mean(a))
  bar <- observed - 1e-12 * max(observed, 1)
  far <- function(idx) abs(mean(all[-idx]) - mean(all[idx])) >= bar
  if (choose(length(all), length(a)) <= 2^22) {
    return(list(p = mean(combn(length(all), length(a), far)), exact = TRUE))
  }
  hits <- replicate(draws, far(sample.int(length(all), length(a))))
  list(p = (sum(hits) + 1) / (draws + 1), exact = FALSE)
}

# glmer run to its optimum (the report's fit is the optimum to more digits than the tolerance).
# One run of an optimiser can stop short of it: on data of the report test's shape (the item
# variance at zero) nloptwrap's BOBYQA stopped short in 15 of 100 data sets (the deviance 0.01
# above the optimum, a scenario log-odds up to 0.03 from it) and minqa's in 1, so minqa's BOBYQA
# is restarted from where it stopped until a restart gains nothing (none of the 100 then short).
restarted_bobyqa <- function(fn, par, lower, upper, control = list(), ...) {
  run <- function(start, rhobeg) {
    minqa::bobyqa(start, fn, lower = lower, upper = upper,
                  control = list(rhobeg = rhobeg, rhoend = 1e-10, maxfun = 1e5))
  }
  best <- run(par, 0.2)
  for (i in 1:10) {
    again <- run(best$par, 0.1)
    gain <- best$fval - again$fval
    if (gain > 0) best <- again
    if (gain <= 1e-10) break
  }
  list(par = best$par, fval = best$fval, conv = 0, message = "BOBYQA, restarted")
}
tight_glmer <- glmerControl(
  optimizer = restarted_bobyqa,
  tolPwrss = 1e-12,
  check.conv.singular = "ignore", check.conv.grad = "ignore", check.conv.hess = "ignore"
)

# The report's second logistic reading: the same model fitted by restricted maximum likelihood
# under the Laplace approximation (beta integrated out beside the random effects, as glmmTMB's
# REML = TRUE does). lme4 has no such fit, but its parts: with nAGQ = 0 glmer's deviance takes
# u and beta to their joint mode, and adding log|R_X|^2 (the beta block of that joint system)
# makes it the restricted criterion; beta is the joint mode and its covariance chol2inv(R_X).
reml_laplace <- function(d) {
  devfun <- glmer(score ~ 0 + scenario + (1 | annotator) + (1 | item), data = d,
                  family = binomial, nAGQ = 0, devFunOnly = TRUE, control = tight_glmer)
  env <- environment(devfun)
  criterion <- function(theta) devfun(theta) + env$pp$ldRX2()
  opt <- restarted_bobyqa(criterion, c(1, 1), lower = c(0, 0), upper = c(Inf, Inf))
  criterion(opt$par)
  list(beta = env$pp$beta(1), vcov = chol2inv(env$pp$RX()))
}

# The logistic model's contrast `w` of a glmer fit beside the report's row.
compare_logistic <- function(what, fit, w, scenarios, row) {
  b <- fixef(fit)
  est <- sum(w * b)
  se <- sqrt(as.numeric(t(w) %*% as.matrix(vcov(fit)) %*% w))
  df <- nlevels(fit@frame$annotator) - scenarios
  compare(paste(what, "log-odds (glmer)"), est, row$logistic_log_odds)
  compare(paste(what, "log-odds df (between-within)"), df, row$logistic_df)
  # glmer's covariance is the inverse of a Hessian it takes by central differences of step
  # 1e-4 on a deviance it computes iteratively; on a bundle with the item variance at zero it
  # differed from the Hessian by Richardson extrapolation (which the report's matches) by up to
  # 0.4%, so the SE is held to 0.2% of itself and the p-values to 1e-3.
  compare(paste(what, "log-odds SE (glmer)"), se, row$logistic_se, within = 2e-3 * se)
  compare(paste(what, "log-odds p (glmer, normal)"), 2 * pnorm(-abs(est / se)),
          row$logistic_p_wald, within = 1e-3)
  compare(paste(what, "log-odds p (t, between-within)"), 2 * pt(-abs(est / se), df),
          row$logistic_p, within = 1e-3)
  reml <- reml_laplace(fit@frame)
  est <- sum(w * reml$beta)
  se <- sqrt(as.numeric(t(w) %*% reml$vcov %*% w))
  compare(paste(what, "log-odds (REML-Laplace)"), est, row$logistic_reml_log_odds)
  compare(paste(what, "log-odds SE (REML-Laplace)"), se, row$logistic_reml_se)
  compare(paste(what, "log-odds p (REML-Laplace, t)"), 2 * pt(-abs(est / se), df),
          row$logistic_reml_p)
}

comparisons <- scores[scores$table == "comparison" & scores$annotators == "all" &
                        !is.na(scores$study), ]
for (key in unique(paste(comparisons$study, comparisons$task, sep = "\t"))) {
  parts <- strsplit(key, "\t")[[1]]
  rows <- comparisons[comparisons$study == as.integer(parts[1]) & comparisons$task == parts[2], ]
  mine <- test[test$study_id == as.integer(parts[1]) & test$task == parts[2], ]
  present <- sort(unique(mine$k))
  # Per scenario the items every annotator answered, then those every scenario has.
  shared <- NULL
  for (k in present) {
    own <- mine[mine$k == k, ]
    per <- table(own$example_id) == length(unique(own$assignment_id))
    have <- as.integer(names(per)[per])
    shared <- if (is.null(shared)) have else intersect(shared, have)
  }
  d <- mine[mine$example_id %in% shared, ]
  d$scenario <- factor(d$k, levels = present)
  d$annotator <- factor(d$assignment_id)
  d$item <- factor(d$example_id)
  fit <- lmerTest::lmer(score ~ 0 + scenario + (1 | annotator) + (1 | item), data = d,
                        REML = TRUE, control = lmerControl(check.conv.singular = "ignore"))
  # As the report: no logistic fit where the outcomes separate the scenarios (an estimate
  # beyond 30 logits) or where (the fewer of annotators and items)^2 * (the more) > 500,000.
  logistic <- NULL
  levels <- c(nlevels(d$annotator), nlevels(d$item))
  if (all(d$score %in% c(0, 1)) && min(levels)^2 * max(levels) <= 5e5) {
    logistic <- tryCatch(
      glmer(score ~ 0 + scenario + (1 | annotator) + (1 | item), data = d, family = binomial,
            control = tight_glmer),
      error = function(e) NULL)
    if (!is.null(logistic) && any(abs(fixef(logistic)) > 30)) logistic <- NULL
  }
  theta <- getME(fit, "theta")
  annotator_zero <- theta[["annotator.(Intercept)"]] < 1e-4
  means <- tapply(d$score, d$annotator, mean)
  scenario_of <- tapply(d$k, d$annotator, function(x) x[1])
  for (i in seq_len(nrow(rows))) {
    row <- rows[i, ]
    what <- sprintf("study %s %s %s", parts[1], parts[2], row$subset)
    w <- weights(row$subset, present)
    # The path: the report decides by permutation exactly where R's fit has no annotator
    # variance.
    same_path <- grepl("permutation test", row$method) == annotator_zero
    checked <- checked + 1
    if (!same_path) {
      differ <- differ + 1
      cat(sprintf("%-70s DIFFERS: R's fit %s the annotator variance at zero, the report: %s\n",
                  substr(paste(what, "path"), 1, 70), if (annotator_zero) "puts" else "does not put",
                  row$method))
    }
    # The logistic model's cells, where the report has them; a fit R cannot make where the
    # report made one (or the other way round) differs.
    if (!is.null(logistic) != !is.na(suppressWarnings(as.numeric(row$logistic_log_odds)))) {
      checked <- checked + 1
      differ <- differ + 1
      cat(sprintf("%-70s DIFFERS: %s\n", substr(paste(what, "logistic"), 1, 70),
                  if (is.null(logistic)) "the report has a logistic fit, R none"
                  else "R has a logistic fit, the report none"))
    } else if (!is.null(logistic)) {
      compare_logistic(what, logistic, w, length(present), row)
    }
    if (!annotator_zero) {
      t <- lmerTest::contest1D(fit, w, ddf = "Satterthwaite")
      compare(paste(what, "estimate"), t$Estimate, row$mean)
      compare(paste(what, "SE"), t$`Std. Error`, row$se)
      compare(paste(what, "df"), t$df, row$df, relative = TRUE)
      compare(paste(what, "p"), t$`Pr(>|t|)`, row$p)
      next
    }
    # The annotator variance at zero: Welch's contrast across the annotators' means, and for
    # a pair the permutation test that decides.
    groups <- lapply(present, function(k) means[scenario_of == k])
    estimate <- sum(w * sapply(groups, mean))
    v <- w^2 * sapply(groups, var) / sapply(groups, length)
    se <- sqrt(sum(v))
    df <- sum(v)^2 / sum(v^2 / (sapply(groups, length) - 1))
    compare(paste(what, "estimate (Welch)"), estimate, row$mean)
    compare(paste(what, "SE (Welch)"), se, row$se)
    compare(paste(what, "df (Welch)"), df, row$df, relative = TRUE)
    # A pair, or a trend that weighs two scenarios only (three equally spaced k), relabels
    # the annotators of those two.
    weighed <- present[w != 0]
    if (length(weighed) == 2 && abs(sum(w)) < 1e-12) {
      a <- means[scenario_of == weighed[w[w != 0] < 0]]
      b <- means[scenario_of == weighed[w[w != 0] > 0]]
      perm <- relabel_p(a, b)
      if (perm$exact) {
        compare(paste(what, "p (exact permutation)"), perm$p, row$p)
      } else {
        # Four Monte Carlo standard errors of the two estimates' difference.
        error <- 4 * sqrt(perm$p * (1 - perm$p) * (1 / 9999 + 1 / 20000)) + tolerance
        compare(paste(what, "p (random permutation)"), perm$p, row$p, within = error)
      }
    }
  }
}

cat(sprintf("\n%d cells checked, %d differ beyond %g\n", checked, differ, tolerance))
if (differ > 0) quit(status = 1)
