# analysis_order.R: the training order's rows (training_order in scores.csv) for the bundle's
# analysis.R (which reads this file from beside itself), as domain::report::order makes them.
#
# Per k-shot group of a task (every finished annotator): S1 on the first and on the second half
# of the training items each annotator submitted, in the order shown (by position; the first
# half is floor(n / 2) items), the mean seconds from showing an item to its submission, each as
# n, mean and both SDs across the annotators; and Pearson's r across annotators of those seconds
# and test S1, with its Fisher-z interval at the row's level and its p (none below 5 pairs).

# The mean of the scores that are there, or NA where none is.
present_mean <- function(x) if (all(is.na(x))) NA else mean(x, na.rm = TRUE)

# One annotator's (first half, second half, seconds) from their submitted training rows.
halves <- function(items) {
  items <- items[order(items$position), ]
  half <- nrow(items) %/% 2
  score <- ifelse(items$skipped %in% c("true", TRUE), 0, items$s1)
  first <- present_mean(score[seq_len(half)])
  second <- present_mean(score[seq_len(nrow(items)) > half])
  seconds <- present_mean((items$submitted_at - items$shown_at) / 1000)
  c(first = first, second = second, seconds = seconds)
}

# A spread's row: n, mean, the population and the sample SD.
compare_spread <- function(what, kind, x, row) {
  compare(paste(what, "n"), paste(kind, "n"), length(x), row$n)
  compare(paste(what, "mean"), paste(kind, "mean"), mean(x), row$mean)
  compare(paste(what, "SD"), paste(kind, "std"), sqrt(mean((x - mean(x))^2)), row$std)
  compare(paste(what, "sample SD"), paste(kind, "std_sample"), sd(x), row$std_sample,
          empty_ok = NA)
}

# Every training-order row of the bundle (all annotators): `training` the finished annotators'
# submitted training rows, `test` their scored test rows.
check_training_order <- function(scores, training, test) {
  rows <- scores[scores$table == "training_order" & scores$annotators == "all", ]
  for (key in unique(paste(rows$task, rows$k, sep = "\t"))) {
    parts <- strsplit(key, "\t")[[1]]
    mine <- rows[rows$task == parts[1] & rows$k == as.integer(parts[2]), ]
    what <- sprintf("training order %s k=%s", parts[1], parts[2])
    items <- training[training$task == parts[1] & training$k == as.integer(parts[2]), ]
    per <- t(sapply(split(items, items$assignment_id), halves))
    per <- per[!is.na(per[, "first"]) & !is.na(per[, "second"]), , drop = FALSE]
    row <- function(subset) mine[startsWith(mine$subset, subset), ]
    compare_spread(paste(what, "first half"), "training_order", per[, "first"], row("first half"))
    compare_spread(paste(what, "second half"), "training_order", per[, "second"],
                   row("second half"))
    timed <- per[!is.na(per[, "seconds"]), , drop = FALSE]
    compare_spread(paste(what, "seconds"), "training_order", timed[, "seconds"],
                   row("seconds per example"))
    r_row <- row("pearson r")
    if (nrow(r_row) == 0) next
    s1 <- tapply(test$score, test$assignment_id, mean)[rownames(timed)]
    x <- timed[!is.na(s1), "seconds"]
    y <- s1[!is.na(s1)]
    r <- cor.test(x, y, conf.level = as.numeric(r_row$level))
    compare(paste(what, "r n"), "training_order n", length(x), r_row$n)
    compare(paste(what, "r"), "training_order r", r$estimate, r_row$mean)
    if (length(x) >= 4) {
      compare(paste(what, "r low"), "training_order r_low", r$conf.int[1], r_row$r_low)
      compare(paste(what, "r high"), "training_order r_high", r$conf.int[2], r_row$r_high)
    }
    compare(paste(what, "r p"), "training_order p", if (length(x) >= 5) r$p.value else NA,
            r_row$p, empty_ok = NA)
  }
}
