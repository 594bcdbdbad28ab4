# analysis_fits.R: the model fits of the bundle's analysis.R (which reads this file from beside
# itself): lmer and glmer run to their optimum, the restricted logistic fit, the logistic cells.

# glmer and lmer run to their optimum (the report's fit is the optimum to more digits than the
# tolerance). One run of an optimiser can stop short of it: on data of the report test's shape
# (the item variance at zero) nloptwrap's BOBYQA stopped short in 15 of 100 data sets (the
# deviance 0.01 above the optimum, a scenario log-odds up to 0.03 from it) and minqa's in 1, and
# lmer's default stopped short near the annotator variance's boundary in 2.4% of the studies of
# the mixed-model path (df 4.08 for the report's 4.00); so minqa's BOBYQA is restarted from
# where it stopped until a restart gains nothing.
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
unchecked_fit <- list(check.conv.singular = "ignore", check.conv.grad = "ignore",
                      check.conv.hess = "ignore")
tight_glmer <- do.call(glmerControl, c(list(optimizer = restarted_bobyqa, tolPwrss = 1e-12),
                                       unchecked_fit))
tight_lmer <- do.call(lmerControl, c(list(optimizer = restarted_bobyqa), unchecked_fit))

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
  compare(paste(what, "log-odds (glmer)"), "logistic_log_odds", est, row$logistic_log_odds)
  compare(paste(what, "log-odds df (between-within)"), "logistic_df", df, row$logistic_df)
  # glmer's covariance is the inverse of a Hessian it takes by central differences of step
  # 1e-4 on a deviance it computes iteratively; on a bundle with the item variance at zero it
  # differed from the Hessian by Richardson extrapolation (which the report's matches) by up to
  # 0.4%, so the SE is held to 0.2% of itself, the p-values to 1e-3 and the interval's ends to
  # 0.2% of their half-width.
  compare(paste(what, "log-odds SE (glmer)"), "logistic_se", se, row$logistic_se,
          within = 2e-3 * se)
  compare(paste(what, "log-odds p (glmer, normal)"), "logistic_p_wald", 2 * pnorm(-abs(est / se)),
          row$logistic_p_wald, within = 1e-3)
  compare(paste(what, "log-odds p (t, between-within)"), "logistic_p",
          2 * pt(-abs(est / se), df), row$logistic_p, within = 1e-3)
  compare_interval(paste(what, "log-odds interval"), "logistic_other_units", est, se, df, row,
                   within = 2e-3 * se * qt(1 - (1 - as.numeric(row$level)) / 2, df) + tolerance)
  reml <- reml_laplace(fit@frame)
  est <- sum(w * reml$beta)
  se <- sqrt(as.numeric(t(w) %*% reml$vcov %*% w))
  compare(paste(what, "log-odds (REML-Laplace)"), "logistic_reml_log_odds", est,
          row$logistic_reml_log_odds)
  compare(paste(what, "log-odds SE (REML-Laplace)"), "logistic_reml_se", se, row$logistic_reml_se)
  compare(paste(what, "log-odds p (REML-Laplace, t)"), "logistic_reml_p",
          2 * pt(-abs(est / se), df), row$logistic_reml_p)
}

# The annotators per scenario for the two-sided two-sample t-test at `alpha` to reach `power`
# at the effect `effect` (domain::stats::power::units_needed, rounded up): 2 where 1.5 already
# reaches it, NA beyond a million.
units_needed <- function(effect, power, alpha) {
  if (!is.finite(effect) || effect <= 0) return(NA)
  reach <- function(n) {
    df <- 2 * n - 2
    crit <- qt(1 - alpha / 2, df)
    ncp <- effect * sqrt(n / 2)
    1 - pt(crit, df, ncp) + pt(-crit, df, ncp) - power
  }
  if (reach(1.5) >= 0) return(2)
  if (reach(1e6) < 0) return(NA)
  ceiling(uniroot(reach, c(1.5, 1e6), tol = 1e-12)$root)
}

# A study's planner rows (table planner, all annotators) from R's fit `fit` of its data `d`
# over `scenarios` scenarios, as domain::stats::power::Pilot plans: τ² = MS_a / m_pilot +
# MS_r (1 / m - 1 / m_pilot) with MS_a = σ²_r + m_pilot σ²_a, its chi-square interval at the
# row's level with Satterthwaite's df, and the annotators needed for the row's difference at
# 80% power at τ and at the interval's ends.
check_planner <- function(what, fit, d, scenarios, plans) {
  plans <- plans[!is.na(plans$std), ]
  if (is.null(fit) || nrow(plans) == 0) return(invisible())
  vc <- as.data.frame(VarCorr(fit))
  unit_var <- vc$vcov[vc$grp == "annotator"]
  resid_var <- sigma(fit)^2
  annotators <- nlevels(d$annotator)
  pilot <- nlevels(d$item)
  resid_df <- annotators * pilot + 1 - annotators - pilot
  for (i in seq_len(nrow(plans))) {
    row <- plans[i, ]
    alpha <- 1 - as.numeric(row$level)
    name <- sprintf("%s planner %s", what, row$mean)
    m <- as.numeric(row$items)
    ms_unit <- resid_var + pilot * unit_var
    a <- 1 / pilot
    c <- 1 / m - 1 / pilot
    tau2 <- max(a * ms_unit + c * resid_var, resid_var / m)
    df <- tau2^2 / ((a * ms_unit)^2 / (annotators - scenarios) +
                      if (resid_df > 0) (c * resid_var)^2 / resid_df else 0)
    ends <- sqrt(df * tau2 / qchisq(c(1 - alpha / 2, alpha / 2), df))
    compare(paste(name, "tau"), "planner std", sqrt(tau2), row$std)
    compare(paste(name, "tau low"), "planner tau_low", ends[1], row$tau_low)
    compare(paste(name, "tau high"), "planner tau_high", ends[2], row$tau_high)
    needed <- sapply(c(sqrt(tau2), ends), function(sd) units_needed(row$mean / sd, 0.8, alpha))
    for (j in 1:3) {
      column <- c("needed", "needed_low", "needed_high")[j]
      compare(paste(name, column), paste("planner", column), needed[j], row[[column]],
              empty_ok = NA)
    }
  }
}
