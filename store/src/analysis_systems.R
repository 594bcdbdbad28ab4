# analysis_systems.R: the humans against each system (read by analysis.R from beside it). Each
# comparison row of scores.csv without a study, labelled "<system> k=K vs humans k=K", is
# rebuilt from the bundle's annotations.csv (the finished annotators of the task and k: their
# submitted test items, a submitted skip scoring 0) and system_scores.csv (each run's official S1
# of each test item). The system's runs are those the report compared: its runs on the humans'
# training splits where it has a run on each of them, else all its runs of that task and k (at
# k = 0 its zero-shot run). Both sides' unit means (annotators, runs) are over the items every
# annotator and every compared run has; the difference (system - humans) is tested by Welch's
# t-test across annotators and runs, or, where one run is compared, by the one-sample t-test of
# the annotators' means against its score. Checked: the items, the difference (mean), se, df,
# p, the interval at the row's level, the effect (the difference over the pooled SD of the two
# sides' unit means), the method's test and runs, and these units on more items (the sign-flip
# p and the item bootstrap's interval, from the row's seed), each kind named "<column>/system".
# And each system's own cells (machine rows), where its runs are in system_scores.csv: the mean
# over its runs, the logit t-interval over other splits and the item bootstrap over more items.

# The system a row's label names: "<system> k=K vs humans k=K".
system_of <- function(label, k, systems) {
  hit <- systems[paste0(systems, " k=", k, " vs humans k=", k) == label]
  if (length(hit) == 1) hit else NA_character_
}

# The ids every unit (`unit` column) of `d` has.
every_unit <- function(d, unit) {
  pairs <- unique(d[, c(unit, "example_id")])
  per <- table(pairs$example_id)
  names(per)[per == length(unique(d[[unit]]))]
}

# Which of the system's runs (their splits) the report compared with humans on `human_splits`.
compared_splits <- function(splits, human_splits) {
  on <- intersect(splits, human_splits)
  if (length(human_splits) > 0 && length(on) == length(human_splits)) on else splits
}

# The method's text the report gives for runs `splits`, as far as R rebuilds it.
method_words <- function(splits) {
  if (length(splits) == 1) {
    paste0("its run on split ", splits)
  } else {
    paste0("its runs on splits ", paste(splits, collapse = ", "))
  }
}

# One humans-against-system row.
check_system <- function(row, runs, test) {
  k <- as.integer(row$k)
  what <- sprintf("%s %s", row$task, row$subset)
  system <- system_of(row$subset, k, unique(runs$system[runs$task == row$task & runs$k == k]))
  if (is.na(system)) {
    tally(what, "system", FALSE, sprintf("%-70s DIFFERS system: no runs in system_scores.csv",
                                         substr(what, 1, 70)))
    return(invisible())
  }
  humans <- test[test$task == row$task & test$k == k, ]
  mine <- runs[runs$task == row$task & runs$system == system & runs$k == k, ]
  human_splits <- sort(unique(humans$training_split[!is.na(humans$training_split)]))
  splits <- compared_splits(sort(unique(mine$split)), human_splits)
  mine <- mine[mine$split %in% splits, ]
  shared <- intersect(every_unit(humans, "assignment_id"), every_unit(mine, "split"))
  humans <- humans[as.character(humans$example_id) %in% shared, ]
  mine <- mine[as.character(mine$example_id) %in% shared, ]
  ua <- as.numeric(tapply(humans$score, humans$assignment_id, mean))
  ub <- as.numeric(tapply(mine$s1, mine$split, mean))
  compare(paste(what, "items"), "items/system", length(shared), row$items)
  welch <- length(ub) >= 2
  test_words <- if (welch) "Welch's t-test " else "one-sample t-test "
  said <- sub("^(Welch's t-test |one-sample t-test ).*$", "\\1", row$method)
  runs_ok <- k == 0 || grepl(method_words(splits), row$method, fixed = TRUE)
  tally(what, "method/system", identical(said, test_words) && runs_ok,
        sprintf("%-70s R %s%s; report %s %s", substr(paste(what, "method"), 1, 70), test_words,
                method_words(splits), substr(row$method, 1, 60),
                if (identical(said, test_words) && runs_ok) "ok" else "DIFFERS method/system"))
  t <- if (welch) t.test(ub, ua, var.equal = FALSE) else t.test(ua, mu = ub)
  estimate <- mean(ub) - mean(ua)
  df <- as.numeric(t$parameter)
  compare(paste(what, "difference"), "mean/system", estimate, row$mean)
  compare(paste(what, "SE"), "se/system", t$stderr, row$se)
  compare(paste(what, "df"), "df/system", df, row$df, relative = TRUE)
  compare(paste(what, "p"), "p/system", t$p.value, row$p)
  compare_interval(paste(what, "interval"), "other_units", estimate, t$stderr, df, row,
                   variant = "/system")
  ss <- function(x) sum((x - mean(x))^2)
  pooled <- sqrt((ss(ua) + ss(ub)) / (length(ua) + length(ub) - 2))
  compare(paste(what, "effect"), "effect/system", estimate / pooled, row$effect, empty_ok = Inf)
  # These annotators and runs on more items (analysis_draws.R), each a row of its matrix.
  by_item <- function(x, unit, score) tapply(x[[score]], list(factor(x[[unit]]),
                                                              factor(x$example_id)), sum)
  check_item_level(what, by_item(humans, "assignment_id", "score"), by_item(mine, "split", "s1"),
                   row, "/system")
}

# Each system's own cell (table machine, official scoring) over its runs: its mean, and its
# intervals over other splits and over more items, as Table 5's over annotators.
check_machine_cells <- function(scores, runs) {
  cells <- scores[scores$table == "machine" & scores$scoring == "official", ]
  for (i in seq_len(nrow(cells))) {
    cell <- cells[i, ]
    system <- sub("^machine:", "", cell$annotators)
    mine <- runs[runs$task == cell$task & runs$system == system & runs$k == cell$k, ]
    name <- sprintf("%s %s k=%d", cell$task, system, cell$k)
    if (nrow(mine) == 0) {
      unchecked(name, "no humans at this task and k, so its runs are not in system_scores.csv")
      next
    }
    units <- data.frame(assignment_id = mine$split, example_id = mine$example_id, score = mine$s1)
    check_cell(name, "machine", tapply(units$score, units$assignment_id, mean),
               cell_matrix(units), cell)
  }
}

# Every humans-against-system row and every system's cell of the bundle (all annotators,
# official scoring).
check_systems <- function(dir, scores, test) {
  rows <- scores[scores$table == "comparison" & scores$annotators == "all" &
                   is.na(scores$study) & grepl(" vs humans k=[0-9]+$", scores$subset), ]
  file <- file.path(dir, "system_scores.csv")
  if (!file.exists(file)) {
    for (i in seq_len(nrow(rows))) {
      unchecked(paste(rows$task[i], rows$subset[i]),
                "the systems' item scores (system_scores.csv) are not in this bundle")
    }
    return(invisible())
  }
  runs <- read.csv(file, stringsAsFactors = FALSE)
  check_machine_cells(scores, runs)
  for (i in seq_len(nrow(rows))) check_system(rows[i, ], runs, test)
}
