# analysis.R: reruns this bundle's inferential cells in R from the bundle's own CSVs, and prints
# each beside the value the report gave (scores.csv). Run it in the unpacked bundle:
#     Rscript analysis.R            (or: Rscript analysis.R path/to/bundle [more bundles ...])
# Several bundles are checked in one R process (lme4 loaded once): a summary per bundle, then
# the total and the largest |R - report| of each kind of cell. --quiet prints only the cells
# that differ and the summaries.
# It reads analysis_relabel.R, analysis_fits.R, analysis_draws.R, analysis_systems.R and
# analysis_order.R from beside itself.
# It needs R with lme4 and lmerTest (Debian: apt-get install r-cran-lme4 r-cran-lmertest);
# jsonlite, where installed, reads each study's declared family from analysis_plans.json.
# It exits with status 1 when a cell differs from the report's beyond its tolerance.
#
# What it reruns, for all finished annotators of the bundle (the "all" view, official scoring),
# each by the name of its scores.csv column:
# - Table 5: each cell's mean, and its interval over other annotators (other_units_low/high):
#   the t-interval of the annotators' test S1 on the logit scale at the row's level,
#   expit(logit(m) +- t(1 - (1 - level) / 2, n - 1) * s / (sqrt(n) * m * (1 - m))); and its
#   interval over more items (more_items_low/high), the item bootstrap redrawn from the row's
#   seed (analysis_draws.R).
# - Each study's declared family of scenario comparisons: one fit of
#   S1 ~ 0 + scenario + (1|annotator) + (1|item) by REML (lme4) on the test items every
#   annotator of every scenario of the study answered, run to its optimum as glmer's (analysis_fits.R)
#   (minqa's BOBYQA restarted until a restart gains nothing, tolerances 1e-10); each contrast
#   (mean, se, df, p) tested with Satterthwaite's degrees of freedom (lmerTest::contest1D), and
#   its interval (other_units_low/high) the t-interval at the row's level (1 - alpha).
#   Where the fit puts the annotator variance at zero the report decides by the permutation test
#   of annotator labels (p; a pair, or a trend relabelling the annotators of every scenario it
#   weighs, each assignment of them to those scenarios (their sizes kept) while there are at most
#   2^22, else the report's 9,999 random ones redrawn from the row's seed), and the smallest p its
#   design can reach as the method's text prints it. There se and df are Welch's
#   across the annotators' mean scores; the interval is Welch's or, where the method says the
#   permutation test gives it, the shifts it does not reject (its inversion: analysis_relabel.R). Which path
#   was taken is checked too, and a comparison the report could not test ("no test") must have no
#   test here either (a weighed scenario of one annotator, or every answer scored alike).
# - Holm's p (p_holm) over the study's declared family (analysis_plans.json's frozen plan; a
#   member without data counts with p = 1); where the plan was not frozen (or jsonlite is
#   missing) over the family rows present, which is the family wherever every scenario has data.
#   A comparison without a test counts p = 1 there, and its own p_holm must be empty.
# - Beside each pair: the permutation test (permutation_p, and permutation_min_p, the smallest p
#   the design can reach: 2 / C(n, n_a) for equal groups, 1 / C(n, n_a) else; for a trend the
#   share of assignments as extreme as the most extreme one on generic scores), the effect
#   (effect: the difference over the pooled SD of the two scenarios' annotator means), and
#   where every annotator of both scenarios answered screening items, the screening-adjusted
#   difference (adjusted, adjusted_se, adjusted_p: the scenario's coefficient of
#   lm(test S1 ~ scenario + screening S1) over those annotators, each S1 over all their
#   submitted items of that phase); and these annotators on more items: the sign-flip test of
#   the item differences (items_p) and the item bootstrap of the difference at the row's level
#   (more_items_low/high), both redrawn from the row's seed (analysis_draws.R: the report's
#   SplitMix64, its draws and their order).
# - Humans against each system (analysis_systems.R, from system_scores.csv: each run's S1 of
#   each test item): the difference, se, df, p, interval and effect of Welch's t-test across
#   annotators and the system's compared runs, or the one-sample test against its one run, and
#   these annotators and runs on more items as beside a pair; and each system's own cell where
#   its runs are in system_scores.csv (machine rows: the mean over its runs, the logit
#   t-interval over other splits and the item bootstrap, as Table 5's).
# - Where every item S1 of a study's family is 0 or 1 (a label task), the logistic mixed model
#   beside it: glmer(S1 ~ 0 + scenario + (1|annotator) + (1|item), family = binomial) by the
#   Laplace approximation, each contrast's log-odds difference, its SE (from glmer's vcov), the
#   Wald p against the normal (glmer's) and against t with the between-within degrees of
#   freedom (annotators less scenarios), the t-interval at the row's level
#   (logistic_other_units_low/high); and the same contrast from the restricted fit under the
#   Laplace approximation (REML-Laplace, made here from lme4's parts: reml_laplace in analysis_fits.R), its SE
#   and p against t.
# - The training order (analysis_order.R): per k-shot group, S1 on each half of the training
#   items as shown, seconds per item, and Pearson's r of seconds and test S1 with its Fisher-z
#   interval and p.
# - The planner's rows (analysis_fits.R): τ from R's fit's annotator and residual variances, its
#   chi-square interval at the row's level with Satterthwaite's df, and the annotators needed
#   (needed, needed_low/high) for the row's difference at 80% power.
# Not rerun: the cells of a system at a task and k without humans (its runs are not in
# system_scores.csv), and a planner's refusal (its reason is words).
# Tolerances (from the benchmark server/bench/analysis-r.sh, docs/src/statistics.md): 1e-4,
# the df relative to itself, the permutation test's interval ends 1e-6, the item bootstrap's
# ends 1e-9 (R's t quantile in the expanded tails); the logistic SE 0.2% of
# itself, its p's 1e-3 and its interval's ends 0.2% of their half-width (glmer's Hessian).
suppressMessages({
  library(lme4)
  library(lmerTest)
})

args <- commandArgs(trailingOnly = TRUE)
quiet <- "--quiet" %in% args
dirs <- setdiff(args, "--quiet")
if (length(dirs) == 0) dirs <- "."
tolerance <- 1e-4
# The report's relabelling limits (domain::stats::relabel).
exact_limit <- 2^22
resamples <- 9999

# Per bundle: cells checked, and the kinds of those that differ; over all: the largest gaps.
checked <- 0
differ <- 0
differing <- character(0)
largest <- list()
paths <- c(mixed = 0, "mixed, item variance zero" = 0, permutation = 0, "no test" = 0,
           logistic = 0)

# Counts one cell of `kind` (its scores.csv column), printed unless quiet or it differs.
tally <- function(what, kind, ok, line) {
  checked <<- checked + 1
  if (!ok) {
    differ <<- differ + 1
    differing <<- union(differing, kind)
  }
  if (!ok || !quiet) cat(line, "\n", sep = "")
}

# One cell: what R computed beside the report's value, and whether they agree. `empty_ok`: the
# report may leave the cell empty where R's value is this (Welch's SE of 0, say).
compare <- function(what, kind, r, report, relative = FALSE, within = tolerance,
                    empty_ok = NULL) {
  report <- suppressWarnings(as.numeric(report))
  gap <- abs(r - report)
  if (relative) gap <- gap / max(1, abs(report))
  ok <- !is.na(gap) && gap <= within
  if (is.na(report) && !is.null(empty_ok) && (!is.finite(r) || isTRUE(all.equal(r, empty_ok)))) {
    ok <- TRUE
  }
  if (!is.na(gap)) largest[[kind]] <<- max(largest[[kind]], gap)
  tally(what, kind, ok, sprintf("%-70s R %-14.8g report %-14.8g %s", substr(what, 1, 70), r,
                                report, if (ok) "ok" else paste("DIFFERS", kind)))
}

# A cell R leaves unchecked, and why.
unchecked <- function(what, why) {
  if (!quiet) cat(sprintf("%-70s not compared: %s\n", substr(what, 1, 70), why))
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


# The relabelling tests and their inversion, the model fits, the report's random draws, the
# systems and the training order, from the files beside this one.
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
for (part in c("analysis_relabel.R", "analysis_fits.R", "analysis_draws.R",
              "analysis_systems.R", "analysis_order.R")) {
  source(file.path(if (length(script) == 1) dirname(script) else ".", part))
}

# A t-interval at the row's level beside the report's two ends, as columns `kind`_low/_high.
# `variant` names the rule where the column has more than one.
compare_interval <- function(what, kind, estimate, se, df, row, within = tolerance,
                             variant = "") {
  half <- qt(1 - (1 - as.numeric(row$level)) / 2, df) * se
  compare(paste(what, "low"), paste0(kind, "_low", variant), estimate - half,
          row[[paste0(kind, "_low")]], within = within)
  compare(paste(what, "high"), paste0(kind, "_high", variant), estimate + half,
          row[[paste0(kind, "_high")]], within = within)
}

# One cell of `table` (Table 5's, or a system's): its mean over the units' S1 `per`, its
# interval over more items (the units' item matrix `items`), and its interval over other units
# at the row's level (the logit t-interval).
check_cell <- function(name, table, per, items, cell) {
  n <- length(per)
  m <- mean(per)
  compare(paste(name, "mean"), paste(table, "mean"), m, cell$mean)
  s <- sd(per)
  check_more_items(name, items, cell, table)
  if (n < 2 || is.na(cell$other_units_low) || m <= 0 || m >= 1 || s == 0) return(invisible())
  half <- qt(1 - (1 - cell$level) / 2, n - 1) * s / (sqrt(n) * m * (1 - m))
  compare(paste(name, "interval low"), paste(table, "other_units_low"), plogis(qlogis(m) - half),
          cell$other_units_low)
  compare(paste(name, "interval high"), paste(table, "other_units_high"),
          plogis(qlogis(m) + half), cell$other_units_high)
}

# Table 5: each cell over its annotators.
check_table5 <- function(scores, test) {
  cells <- scores[scores$table == "table5" & scores$annotators == "all" &
                    scores$scoring == "official", ]
  for (i in seq_len(nrow(cells))) {
    cell <- cells[i, ]
    mine <- test[test$task == cell$task & test$k == cell$k, ]
    check_cell(sprintf("%s k=%d", cell$task, cell$k), "table5",
               tapply(mine$score, mine$assignment_id, mean), cell_matrix(mine), cell)
  }
}

# The labels of a study's declared family from the bundle's analysis_plans.json (its frozen
# plan), or NULL where there is none to read.
family_of <- function(dir, study) {
  file <- file.path(dir, "analysis_plans.json")
  if (!file.exists(file) || !requireNamespace("jsonlite", quietly = TRUE)) return(NULL)
  for (p in jsonlite::fromJSON(file, simplifyVector = FALSE)) {
    if (p$study == study && !is.null(p$plan_json)) {
      return(sapply(jsonlite::fromJSON(p$plan_json, simplifyVector = FALSE)$family,
                    function(c) c$label))
    }
  }
  NULL
}

# A study's family of comparisons `rows`, from its test answers `mine` and screening answers.
check_study <- function(dir, study, task, rows, mine, screen, plans) {
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
  fit <- tryCatch(lmerTest::lmer(score ~ 0 + scenario + (1 | annotator) + (1 | item), data = d,
                                 REML = TRUE, control = tight_lmer), error = function(e) NULL)
  # As the report: no logistic fit where the outcomes separate the scenarios (an estimate
  # beyond 30 logits) or where (the fewer of annotators and items)^2 * (the more) > 500,000.
  logistic <- NULL
  levels <- c(nlevels(d$annotator), nlevels(d$item))
  if (all(d$score %in% c(0, 1)) && min(levels)^2 * max(levels) <= 5e5) {
    logistic <- tryCatch(suppressWarnings(
      glmer(score ~ 0 + scenario + (1 | annotator) + (1 | item), data = d, family = binomial,
            control = tight_glmer)),
      error = function(e) NULL)
    if (!is.null(logistic) && any(abs(fixef(logistic)) > 30)) logistic <- NULL
  }
  theta <- if (is.null(fit)) c(annotator = 0, item = 0) else
    setNames(getME(fit, "theta")[c("annotator.(Intercept)", "item.(Intercept)")],
             c("annotator", "item"))
  annotator_zero <- theta[["annotator"]] < 1e-4
  means <- tapply(d$score, d$annotator, mean)
  scenario_of <- tapply(d$k, d$annotator, function(x) x[1])
  groups <- lapply(present, function(k) means[scenario_of == k])
  # Each annotator's (screening, test) S1 over all their submitted items of the phase.
  s1 <- function(x, who) tapply(x$score, x$assignment_id, mean)[as.character(who)]
  decided <- rep(NA, nrow(rows))
  for (i in seq_len(nrow(rows))) {
    row <- rows[i, ]
    what <- sprintf("study %s %s %s", study, task, row$subset)
    w <- weights(row$subset, present)
    design <- relabel_design(groups, w, row$seed)
    if (is.na(row$p) && startsWith(row$method, "no test")) {
      # No test in the report: here too a weighed scenario has one annotator or every answer
      # scored alike.
      paths[["no test"]] <<- paths[["no test"]] + 1
      none <- any(lengths(groups)[w != 0] < 2) ||
        length(unique(d$score[d$k %in% present[w != 0]])) <= 1
      tally(what, "p", none, sprintf("%-70s %s", substr(paste(what, "no test"), 1, 70),
                                     if (none) "ok" else "DIFFERS p: R has a test"))
      decided[i] <- NA
      estimate <- sum(w * sapply(groups, mean))
    } else {
      # The path: the report decides by permutation exactly where R's fit has no annotator
      # variance.
      by_permutation <- grepl("permutation test", row$method)
      path <- if (annotator_zero) "permutation" else if (theta[["item"]] < 1e-4)
        "mixed, item variance zero" else "mixed"
      paths[[path]] <<- paths[[path]] + 1
      tally(what, "method", by_permutation == annotator_zero,
            sprintf("%-70s R: %s, the report: %s", substr(paste(what, "path"), 1, 70), path,
                    if (by_permutation == annotator_zero) "ok" else paste("DIFFERS method:",
                                                                           row$method)))
      # The logistic model's cells, where the report has them; a fit R cannot make where the
      # report made one (or the other way round) differs.
      if (!is.null(logistic) != !is.na(row$logistic_log_odds)) {
        tally(what, "logistic_log_odds", FALSE,
              sprintf("%-70s DIFFERS logistic_log_odds: %s", substr(paste(what, "logistic"), 1, 70),
                      if (is.null(logistic)) "the report has a logistic fit, R none"
                      else "R has a logistic fit, the report none"))
      } else if (!is.null(logistic)) {
        paths[["logistic"]] <<- paths[["logistic"]] + 1
        compare_logistic(what, logistic, w, length(present), row)
      }
      alpha <- 1 - as.numeric(row$level)
      if (!annotator_zero) {
        t <- lmerTest::contest1D(fit, w, ddf = "Satterthwaite")
        estimate <- t$Estimate
        compare(paste(what, "estimate"), "mean", estimate, row$mean)
        compare(paste(what, "SE"), "se", t$`Std. Error`, row$se)
        compare(paste(what, "df"), "df", t$df, row$df, relative = TRUE)
        compare(paste(what, "p"), "p", t$`Pr(>|t|)`, row$p)
        compare_interval(paste(what, "interval"), "other_units", estimate, t$`Std. Error`, t$df,
                         row)
        decided[i] <- t$`Pr(>|t|)`
      } else {
        # The annotator variance at zero: Welch's contrast across the annotators' means, and the
        # permutation test that decides.
        estimate <- sum(w * sapply(groups, mean))
        v <- w^2 * sapply(groups, var) / lengths(groups)
        se <- sqrt(sum(v))
        df <- sum(v)^2 / sum(v^2 / (lengths(groups) - 1))
        compare(paste(what, "estimate (Welch)"), "mean", estimate, row$mean)
        compare(paste(what, "SE (Welch)"), "se/Welch", se, row$se, empty_ok = 0)
        if (se > 0) compare(paste(what, "df (Welch)"), "df/Welch", df, row$df, relative = TRUE)
        p <- relabel_p(design)
        compare(paste(what, "p (permutation)"), "p/permutation", p, row$p)
        decided[i] <- p
        # The method's "smallest reachable p" (a trend's is nowhere else), as the report prints it.
        said <- regmatches(row$method, regexpr("(?<=smallest reachable p )[0-9.e-]+", row$method,
                                               perl = TRUE))
        ours <- if (design$min_p < 0.001) sub("e([-+])0*", "e\\1", sprintf("%.1e", design$min_p))
          else sprintf("%.3f", design$min_p)
        tally(what, "method", identical(said, ours), sprintf(
          "%-70s R %-14s report %-14s %s", substr(paste(what, "smallest reachable p"), 1, 70), ours,
          said, if (identical(said, ours)) "ok" else "DIFFERS method"))
        if (grepl("interval is Welch", row$method)) {
          compare_interval(paste(what, "interval (Welch)"), "other_units", estimate, se, df, row,
                           variant = "/Welch")
        } else {
          ends <- shift_interval(design, alpha)
          if (is.null(ends)) {
            none <- is.na(row$other_units_low) && is.na(row$other_units_high)
            tally(what, "other_units_low/permutation", none, sprintf(
              "%-70s R: no shift rejected (smallest p %.4g), report %s", substr(paste(
                what, "interval (permutation)"), 1, 70), design$min_p,
              if (none) "empty: ok" else "not empty: DIFFERS other_units_low/permutation"))
          } else {
            compare(paste(what, "interval low (permutation)"), "other_units_low/permutation",
                    ends[1], row$other_units_low, within = 1e-6)
            compare(paste(what, "interval high (permutation)"), "other_units_high/permutation",
                    ends[2], row$other_units_high, within = 1e-6)
          }
        }
      }
    }
    if (startsWith(row$subset, "linear trend")) next
    # Beside a pair (b against a): the permutation test of a's and b's annotators (its
    # relabellings drawn with a's units first), the effect and these annotators on more items.
    ks <- label_ks(row$subset)
    a <- means[scenario_of == ks[2]]
    b <- means[scenario_of == ks[1]]
    beside <- relabel_design(list(a, b), c(-1, 1), row$seed)
    compare(paste(what, "permutation_p"), "permutation_p", relabel_p(beside), row$permutation_p)
    compare(paste(what, "permutation_min_p"), "permutation_min_p", beside$min_p,
            row$permutation_min_p)
    pooled <- sqrt((sum((a - mean(a))^2) + sum((b - mean(b))^2)) / (length(a) + length(b) - 2))
    compare(paste(what, "effect"), "effect", estimate / pooled, row$effect, empty_ok = Inf)
    check_item_level(what, cell_matrix(d[d$k == ks[2], ]), cell_matrix(d[d$k == ks[1], ]), row)
    # Screening-adjusted, where every annotator of both scenarios has screening and test S1.
    who <- unique(mine$assignment_id[mine$k %in% ks])
    x <- s1(screen, who)
    if (any(is.na(x))) next
    y <- s1(mine, who)
    g <- factor(mine$k[match(who, mine$assignment_id)], levels = rev(ks))
    adjustment <- summary(lm(y ~ g + x))
    coefficients <- adjustment$coefficients
    b <- paste0("g", ks[1])
    if (!"x" %in% rownames(coefficients)) {
      # Screening S1 never varies within the scenarios: no adjustment, here as in the report.
      none <- is.na(row$adjusted)
      tally(what, "adjusted", none, sprintf("%-70s R: no adjustment (screening S1 constant), %s",
                                            substr(paste(what, "screening-adjusted"), 1, 70),
                                            if (none) "ok" else "DIFFERS adjusted"))
      next
    }
    compare(paste(what, "screening-adjusted"), "adjusted", coefficients[b, 1], row$adjusted)
    # Where the line fits exactly (every test S1 alike, say) the report has no test: its
    # residual sum of squares is 0, R's a rounding error.
    exact <- adjustment$sigma <= 1e-12 * max(1, abs(y))
    compare(paste(what, "screening-adjusted SE"), "adjusted_se",
            if (exact) 0 else coefficients[b, 2], row$adjusted_se, empty_ok = 0)
    compare(paste(what, "screening-adjusted p"), "adjusted_p",
            if (exact) NaN else coefficients[b, 4], row$adjusted_p, empty_ok = NaN)
  }
  check_planner(sprintf("study %s %s", study, task), fit, d, length(present), plans)
  # Holm over the declared family; a member without a row, or without a test (NA: its own
  # p_holm stays empty), counts with p = 1.
  family <- family_of(dir, study)
  if (is.null(family)) family <- rows$subset
  p <- rep(1, length(family))
  p[match(rows$subset, family)] <- ifelse(is.na(decided), 1, decided)
  holm <- p.adjust(p, method = "holm")
  for (i in seq_len(nrow(rows))) {
    what <- sprintf("study %s %s %s Holm", study, task, rows$subset[i])
    if (is.na(decided[i])) {
      none <- is.na(rows$p_holm[i])
      tally(what, "p_holm", none, sprintf("%-70s no test: %s", substr(what, 1, 70),
                                          if (none) "empty: ok" else "not empty: DIFFERS p_holm"))
    } else {
      compare(what, "p_holm", holm[match(rows$subset[i], family)], rows$p_holm[i])
    }
  }
}

# One unpacked bundle.
check_bundle <- function(dir) {
  annotations <- read.csv(file.path(dir, "annotations.csv"), stringsAsFactors = FALSE,
                          colClasses = c(answer = "character"))
  scores <- read.csv(file.path(dir, "scores.csv"), stringsAsFactors = FALSE,
                     colClasses = c(seed = "character"))
  # A submitted skip scores 0, as in the report; items never submitted do not count.
  done <- annotations[annotations$status == "finished" &
                        annotations$submitted %in% c("true", TRUE), ]
  done$score <- ifelse(done$skipped %in% c("true", TRUE), 0, done$s1)
  training <- done[done$phase == "training", ]
  done <- done[!is.na(done$score), ]
  test <- done[done$phase == "test", ]
  check_table5(scores, test)
  comparisons <- scores[scores$table == "comparison" & scores$annotators == "all" &
                          !is.na(scores$study), ]
  for (key in unique(paste(comparisons$study, comparisons$task, sep = "\t"))) {
    parts <- strsplit(key, "\t")[[1]]
    of <- function(x) x[x$study_id == as.integer(parts[1]) & x$task == parts[2], ]
    rows <- comparisons[comparisons$study == as.integer(parts[1]) &
                          comparisons$task == parts[2], ]
    plans <- scores[scores$table == "planner" & scores$annotators == "all" &
                      scores$study %in% as.integer(parts[1]) & scores$task == parts[2], ]
    check_study(dir, parts[1], parts[2], rows, of(test), of(done[done$phase == "screening", ]),
                plans)
  }
  check_systems(dir, scores, test)
  check_training_order(scores, training, test)
}

totals <- c(checked = 0, differ = 0, bundles = 0, failing = 0)
for (dir in dirs) {
  checked <- 0
  differ <- 0
  differing <- character(0)
  tryCatch(check_bundle(dir), error = function(e) {
    tally(dir, "error", FALSE, paste("DIFFERS error: R stopped:", conditionMessage(e)))
  })
  cat(sprintf("bundle %s: %d cells checked, %d differ%s\n", dir, checked, differ,
              if (differ > 0) paste0(": ", paste(differing, collapse = ", ")) else ""))
  totals <- totals + c(checked, differ, 1, differ > 0)
}
cat("\nThe largest |R - report| of each kind of cell (relative for df):\n")
for (kind in sort(names(largest))) cat(sprintf("  %-28s %.3g\n", kind, largest[[kind]]))
cat("Comparisons by R's path:", paste(names(paths), paths, sep = " ", collapse = ", "), "\n")
cat(sprintf("\n%d cells checked, %d differ beyond their tolerances (%d bundles, %d with a difference)\n",
            totals[["checked"]], totals[["differ"]], totals[["bundles"]], totals[["failing"]]))
if (totals[["differ"]] > 0) quit(status = 1)
