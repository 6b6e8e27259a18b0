"""Published and worked reference values the tests check EvalBoard against, each with its source.

Sections follow docs/methods.md. Unless a comment names another source, a value is a worked example of
docs/methods.md, computed independently with numpy 2.4.6 / scipy 1.17.1 / statsmodels 0.15.0 /
krippendorff 0.9.0 (or a direct formula cross-checked against one of them) and printed there with the
precision kept here. Tolerances stay in the test files, next to the comparison they govern: a value
printed to 7 decimals is compared with an absolute tolerance of about 5e-8, one printed to 4 with 5e-5.

Data sets of the worked examples:
- D1 (docs/methods.md §2): 52 votes between models A–D;
- D2 (§5): 43 votes between A, B, C with a position × period design;
- D3 (§8): scores of models X, Y, Z on 10 tasks;
- D4 (§8): 24 votes between A, B, C with answer lengths.
"""

from __future__ import annotations

import numpy as np

# --- docs/methods.md §0: conventions ----------------------------------------------------------------

Z_975 = 1.959963984540054  # Φ⁻¹(0.975), scipy.stats.norm.ppf(0.975)

# --- docs/methods.md §1: Wilson score interval ------------------------------------------------------

# (x, n, Wilson (low, high), Wilson-cc (low, high)) at α = 0.05, 10 decimals; the cc column equals
# scipy ``binomtest(x, n).proportion_ci(method="wilsoncc")`` (Newcombe 1998, method 4).
WILSON_TABLE = [
    (7, 20, (0.1811918241, 0.5671457233), (0.1630866797, 0.5905104338)),
    (0, 10, (0.0, 0.2775327999), (0.0, 0.3445372183)),
    (10, 10, (0.7224672001, 1.0), (0.6554627817, 1.0)),
    (55, 100, (0.4524460300, 0.6438546202), (0.4475426312, 0.6485718897)),
    (1, 1, (0.2065493144, 1.0), (0.0546207555, 1.0)),
]
# Weighted example: outcomes y with weights w; p̂_w, Kish n_eff and both intervals with n := n_eff
# (statsmodels ``proportion_confint(p̂_w·n_eff, n_eff, method="wilson")`` agrees).
WEIGHTED_Y = [1, 1, 1, 0, 0, 1, 0, 1]
WEIGHTED_W = [1, 2, 0.5, 1.5, 1, 0.25, 3, 1]
WEIGHTED_P = 0.4634146341
WEIGHTED_N_EFF = 5.6599326599
WEIGHTED_WILSON = (0.1607888031, 0.7956237481)
WEIGHTED_WILSON_CC = (0.1136248280, 0.8477388139)

# --- docs/methods.md §2: Bradley–Terry on D1 --------------------------------------------------------

D1_MODELS = ("A", "B", "C", "D")
# Per pair (i, j, i-wins, j-wins, ties), i always on the left; D1_NAMED is the same with model names.
D1 = [(0, 1, 6, 3, 1), (0, 2, 7, 2, 1), (0, 3, 5, 1, 0), (1, 2, 4, 4, 2), (1, 3, 6, 2, 0), (2, 3, 3, 3, 2)]
D1_NAMED = [(D1_MODELS[i], D1_MODELS[j], wi, wj, t) for i, j, wi, wj, t in D1]
D1_W = np.array([[0, 6.5, 7.5, 5], [3.5, 0, 5, 6], [2.5, 5, 0, 4], [1, 2, 4, 0]])  # ties as half wins
# Win-rate route: r and n of the pairs AB, AC, AD, BC, BD, CD; W = r·n reproduces D1_W exactly.
D1_PAIR_WIN_RATES = [0.65, 0.75, 5 / 6, 0.5, 0.75, 0.5]
D1_PAIR_COUNTS = [10, 10, 6, 10, 8, 8]
D1_MLE_PI = [1.9317162, 0.9409371, 0.6708237, 0.4565230]  # exact MLE: scipy BFGS and statsmodels GLM agree
D1_MM_PI = [1.9317152, 0.9409376, 0.6708240, 0.4565232]  # the MM loop of §2 (tol 1e-6) ...
D1_MM_ITERATIONS = 25  # ... stops after 25 iterations
D1_ELO = [1614.3773, 1489.4242, 1430.6434, 1363.7851]  # 400·log10(π) + 1500, mean(π) = 1
D1_ELO_GEOMETRIC = [1639.8197, 1514.8668, 1456.0859, 1389.2276]  # geometric-mean normalisation
D1_ELO_ANCHORED_D = [1250.5921, 1125.6392, 1066.8583, 1000.0]  # anchored D = 1000
D1_P_A_BEATS_B = 0.6724499
# Weighted D1 (weighted MM, §2 "Weighted MM").
D1_WEIGHTED_W = np.array([[0, 9, 9.5, 7], [5, 0, 6, 8], [3.5, 7, 0, 5.5], [1, 3, 5.5, 0]])
D1_WEIGHTED_PI = [1.9289345, 0.9000165, 0.7157356, 0.4553134]
D1_PRIOR_PI = [1.8947731, 0.9478818, 0.6831023, 0.4742428]  # c = 0.5 forced on identifiable D1
# D1 + model E losing 4–0 to A (§2 "Non-identifiable"): pure MM (π_E = 0) and the c = 0.5 MAP (scipy).
D1E_PURE_PI = [2.4146435, 1.1761723, 0.8385301, 0.5706541, 0.0]
D1E_MAP_PI = [2.3332145, 1.1183174, 0.8046596, 0.5552990, 0.1885095]
D1E_MAP_ELO = [1647.18, 1519.43, 1462.24, 1397.81, 1210.13]
# Two components (§2 "Existence", failure c): MM output is arbitrary, π = (1.5, 0.5, 1, 1).
DISCONNECTED_W = np.array([[0, 3, 0, 0], [1, 0, 0, 0], [0, 0, 0, 2], [0, 0, 2, 0]], dtype=float)
DISCONNECTED_MM_PI = [1.5, 0.5, 1.0, 1.0]
# Tie models on D1 (MLE; Davidson 1970, Rao & Kupper 1967).
D1_DAVIDSON_PI = [2.0806462, 0.9084040, 0.6156312, 0.3953186]
D1_DAVIDSON_NU = 0.2890916

# --- docs/methods.md §3: bootstrap --------------------------------------------------------------------

# D1, seed 0, B = 200, multinomial over the sorted cells.
D1_FIRST_DRAW = [3, 0, 2, 0, 2, 12, 1, 6, 4, 4, 5, 0, 7, 0, 3, 3]
D1_ELO_CI = [(1527.17, 1670.74), (1388.48, 1575.84), (1271.47, 1524.78), (1164.55, 1473.40)]
D1_RANK_CI = [(1, 2), (1, 3), (2, 4), (3, 4)]
D1_ARENA_RANK = [1, 1, 2, 2]
# Simulation check on D1 (3000 replicates each): Elo_A mean/sd 1611.88/39.9 resampling rows, 1611.94/41.5
# multinomial over cells (KS p = 0.78); the mean of both to one decimal.
D1_BOOTSTRAP_ELO_A_MEAN = 1611.9
# D3 (below), seed 0, B = 1000, row protocol ``rng.integers(0, n, size=(B, n))``.
D3_FIRST_INDEX_ROW = [8, 6, 5, 2, 3, 0, 0, 0, 1, 8]
D3_MEAN_X = 0.73
D3_MEAN_X_CI = (0.61975, 0.83)
D3_STRATIFIED_X_CI = (0.62, 0.83)  # stratified by category
D3_PAIRED_X_Y = (0.07, (0.0, 0.14))  # not significant: the CI touches 0
D3_PAIRED_X_Y_ZERO_REPLICATES = 16  # replicate means exactly 0
D3_PAIRED_Y_Z = (0.17, (0.07, 0.25))  # significant
D3_POISSON_X_CI = (0.60, 0.84)  # 1 replicate dropped (zero total weight)
# P(rank 1) of X, Y, Z: from left-to-right float sums, as docs/methods.md §3 prints it, and with exact
# ties kept (integer sums of the same draw; ties are real since the scores are multiples of 0.1).
D3_P_RANK1_FLOAT_SUMS = [0.975, 0.034, 0.0]
D3_P_RANK1_EXACT_TIES = [0.984, 0.034, 0.0]

# --- docs/methods.md §4: bias tests -------------------------------------------------------------------

POSITION_60_OF_100_P = 0.0568879  # scipy binomtest(60, 100), two-sided
POSITION_60_OF_100_WILSON = (0.5020, 0.6906)  # 4 decimals
POSITION_7_OF_10_P = 0.34375
D2_IPW_POSITION = (0.7479938, 14.0213991, 1.8572332, 0.0632780)  # p̂_w, n_eff, z, p of the IPW score test
ORDER_40_50_VS_30_50 = (2.1821789, 0.0290963, 4.7619048, 0.0485816)  # z, p, χ² (no Yates), Fisher exact p
MODEL_POSITION_TEST = (4.5, 2, 0.1053992)  # χ², df, p of A 30/20, B 25/25, C 15/25
MODEL_POSITION_P = [0.2026388, 1, 0.1538599]
MODEL_POSITION_P_HOLM = [0.4615798, 1, 0.4615798]
TIME_EXPOSURE_TEST = (12.5, 2, 0.0019305, 0.0066004)  # χ², df, p, and model A's binomial p (A 35/15 …)
LENGTH_62_OF_100_P = 0.0209787
LOGIT_TOY_X = [-.6, -.4, -.3, -.2, -.1, 0, .05, .1, .2, .3, .5, .7]  # the toy data of §4e
LOGIT_TOY_Y = [0, 0, 1, 0, 1, 0, 1, 1, 0, 1, 1, 1]
LOGIT_TOY_BETA = (0.4130490, 4.0195589)  # statsmodels Logit
LOGIT_TOY_SE = (0.7016070, 2.5653814)
D4_LENGTH_INTERCEPT = (0.5054975, 0.4597481, 0.2715458)  # β₀, SE, Wald p on D4
D4_LENGTH_BETA = (0.3094249, 1.3764928, 0.8221409)  # β₁, SE, Wald p on D4
PAIRING_3_PAIRS = (5.0, 2, 0.0820850)  # scipy chisquare([30, 25, 15])
PAIRING_6_PAIRS = (43.3333333, 5, 3.1626e-08)  # scipy chisquare([30, 25, 15, 0, 5, 15])

# --- docs/methods.md §5 and §6: D2, stratified correction and IPW --------------------------------------

# (left, right, early?, left wins, right wins, ties).
D2 = [("A", "B", True, 20, 8, 2), ("B", "A", True, 1, 1, 0), ("A", "B", False, 1, 0, 1), ("B", "A", False, 1, 0, 0),
      ("A", "C", True, 2, 1, 0), ("C", "A", False, 2, 0, 0), ("B", "C", True, 1, 1, 0), ("C", "B", False, 0, 0, 1)]
D2_A_FIELD_RAW = 0.6375  # 25.5 / 40
D2_A_FIELD_CORRECTED = 0.4867424
D2_A_VS_B = (0.6714286, 0.4875, 4)  # raw, corrected, strata used
D2_A_VS_C = (0.4, 0.3333333, 2)
D2_IPW_WEIGHTS = [0.2, 1.7916667, 2.6875, 5.0]  # distinct weights after truncation to [0.2, 5]
D2_IPW_WEIGHT_SUM = 42.875
D2_IPW_N_EFF = 15.4982128
D2_PI = [1.1835518, 0.6161294, 1.2003188]  # unweighted BT, A, B, C
D2_ELO = [1529.2749, 1415.8688, 1531.7186]
D2_IPW_W = [[0, 10.91875, 3.583333], [10.83125, 0, 5.1875], [7.166667, 5.1875, 0]]
D2_IPW_PI = [0.8263140, 0.9359400, 1.2377461]
D2_IPW_ELO = [1466.8580, 1488.4992, 1537.0526]

# --- docs/methods.md §7: annotators -----------------------------------------------------------------

U1_GOLDEN_WILSON = (0.3755346, 0.9637759)  # Wilson CI of 4 correct of 5 golden answers
R1 = [0, 0, 1, 1, 2, 0, 1, 0, 2, 1]  # two raters, categories 0/1/2
R2 = [0, 1, 1, 1, 2, 0, 0, 0, 1, 1]
R1_R2_COHEN_KAPPA = 0.5161290  # p_o = 0.7, p_e = 0.38
R1_R2_ALPHA = 0.5365854  # Krippendorff α, nominal
FLEISS_ITEMS = [[0, 0, 0], [0, 0, 1], [1, 1, 1], [1, 2, 2], [2, 2, 2], [0, 1, 2]]
FLEISS_KAPPA = 0.4166667  # statsmodels fleiss_kappa agrees
# Raters × items with missing ratings (None); the krippendorff package and the direct formula agree.
ALPHA_MISSING = [[0, 0, 1, 1, 2, 0, None, 0], [0, 1, 1, 1, 2, None, 1, 0], [None, 1, 1, 2, 2, 0, 1, 0]]
ALPHA_MISSING_VALUE = 0.7142857
# evalica's test inputs (github.com/dustalov/evalica, ../shared/data/peers/PROVENANCE.md): the values
# evalica's tests expect; codings.csv is Krippendorff's textbook example.
EVALICA_ALPHA = {"codings.csv": 0.7434211, "gcl.csv": 0.0833333}

# --- docs/methods.md §8: score tables, Friedman / Nemenyi, style control -------------------------------

# D3: tasks 1–5 "math", 6–10 "code".
D3_X = [.9, .8, .7, 1, .6, .5, .9, .8, .7, .4]
D3_Y = [.8, .8, .6, .9, .7, .4, .6, .9, .5, .4]
D3_Z = [.5, .6, .7, .6, .5, .3, .4, .5, .6, .2]
D3_CATEGORIES = ["math"] * 5 + ["code"] * 5
D3_MEANS = [0.73, 0.66, 0.49]  # X, Y, Z
D3_MATH_MEANS = [0.80, 0.76, 0.58]
D3_CODE_MEANS = [0.66, 0.56, 0.40]
D3_WIN_RATES = [0.8, 0.4, 0.1]  # wins 8/4/1 of 10 tasks (every model within 1e-12 of the best wins)
D3_MEAN_RANKS = [1.35, 1.90, 2.75]  # within-task ranks, 1 = best, ties averaged
D3_FRIEDMAN_CHI2_UNCORRECTED = 9.95  # Demšar's χ²_F
D3_FRIEDMAN_P_UNCORRECTED = 0.0069085
D3_TIE_FACTOR = 0.925
D3_FRIEDMAN = (10.7567568, 0.0046153)  # tie-corrected χ²_F (= scipy friedmanchisquare), p
D3_IMAN_DAVENPORT = (10.4736842, 0.00096194)  # F_F from the corrected χ²_F, p
D3_IMAN_DAVENPORT_UNCORRECTED = (8.9104478, 0.0020428)  # F_F from χ²_F = 9.95, p
D3_NEMENYI = (2.3437006, 1.0481348)  # q_α, CD
# Nemenyi q_α for k = 2..10 at α = 0.05: studentized_range.ppf(0.95, k, inf)/√2 (Demšar 2006, Table 5(a),
# agrees to ±0.001).
NEMENYI_Q_05 = [1.9600, 2.3437, 2.5690, 2.7278, 2.8497, 2.9483, 3.0309, 3.1017, 3.1637]
# D4 (models A, B, C; outcome L/R/T = left wins / right wins / tie; lengths in tokens).
D4_LEFT, D4_RIGHT = "ABCABCABCABCBCABCAACBBCA", "BCABCACABCABAABCBCBACAAB"
D4_OUTCOME = "LLRLTRLLRRLTLRLLRTLRLLRL"
D4_LEN_L = [900, 300, 500, 1200, 350, 450, 800, 250, 600, 1000, 400, 700, 300, 650, 1100, 320, 480, 950, 500,
            300, 700, 280, 520, 1000]
D4_LEN_R = [400, 600, 900, 500, 400, 800, 300, 700, 500, 450, 500, 650, 900, 1000, 500, 900, 500, 600, 800, 500,
            900, 700, 600, 400]
D4_FEATURE_MEAN_SD = (-0.0447973, 0.3132236)  # f = (a − b)/(a + b + 1), population sd
# Style-controlled BT on D4 (statsmodels GLM binomial with fractional y; scipy agrees).
D4_THETA = [0, -0.9663681, -2.2595600]
D4_BETA = -0.7576722
D4_BETA_SE = 0.9314101
D4_PI = [2.0203942, 0.7686839, 0.2109219]
D4_ELO = [1622.1744, 1454.2991, 1229.6487]
D4_PLAIN_PI = [1.4455480, 1.2814772, 0.2729748]  # plain BT on D4

# --- docs/methods.md §9: Agresti's baseball (1987 American League), ../shared/data/bradleyterry2_classic ------

# BradleyTerry2 (R) tests/baseball.Rout.save, 4 decimals; teams after Baltimore (θ = 0, the reference
# level): Boston, Cleveland, Detroit, Milwaukee, New York, Toronto.
# `baseballModel2` (~ team + at.home): home advantage, its SE, abilities and their SEs.
BASEBALL_HOME = (0.3023, 0.1309)
BASEBALL_HOME_THETA = [1.1438, 0.7047, 1.4754, 1.6196, 1.2813, 1.3271]
BASEBALL_HOME_THETA_SE = [0.3378, 0.3350, 0.3446, 0.3474, 0.3404, 0.3403]
# Agresti, Categorical Data Analysis (2nd ed., 2002), Table 10.11, column 5: abilities with home
# advantage normalised to sum 1, sorted (3 decimals; BradleyTerry2 test-baseball.R).
BASEBALL_HOME_PI_SHARES = [0.044, 0.088, 0.137, 0.157, 0.164, 0.190, 0.220]
# `baseballModel1` (plain BT).
BASEBALL_THETA = [1.1077, 0.6839, 1.4364, 1.5814, 1.2476, 1.2945]
BASEBALL_THETA_SE = [0.3339, 0.3319, 0.3396, 0.3433, 0.3359, 0.3367]

# --- published leaderboards ---------------------------------------------------------------------------

# AlpacaEval, github.com/tatsu-lab/alpaca_eval, column win_rate (percent) of
# src/alpaca_eval/leaderboards/data_AlpacaEval_2/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv
# (AlpacaEval 2.0: weighted GPT-4-turbo judge against gpt4_1106_preview).
ALPACA2_PUBLISHED = {"gpt4_1106_preview": 50.0, "claude-2": 17.188240356708075, "claude-2.1": 15.733506736409938,
                     "OpenHermes-2.5-Mistral-7B": 10.340415705751552, "gpt-3.5-turbo-1106": 9.177964561962735,
                     "jina-chat": 7.786130393366459}
# ... and of src/alpaca_eval/leaderboards/data_AlpacaEval/alpaca_eval_gpt4_leaderboard.csv (AlpacaEval 1.0:
# GPT-4 judge against text_davinci_003); gpt4_turbo there is gpt4_1106_preview here.
ALPACA1_PUBLISHED = {"gpt4_1106_preview": 97.69900497512438, "gpt4": 95.27950311, "tulu-2-dpo-70b": 95.03105590062113,
                     "Yi-34B-Chat": 94.08468244084682, "LMCocktail-10.7B-v1": 92.21668742216688}
# MMLU-Pro (github.com/TIGER-AI-Lab/MMLU-Pro): Meta-Llama-3-70B accuracy in percent, as published in the
# README mini-leaderboard (the official script guesses unanswered questions with a seeded random choice), and
# with 1/n_options expected credit for the unanswered (../shared/data/mmlu_pro_per_question/PROVENANCE.md).
MMLU_PRO_LLAMA3_70B_PUBLISHED = 52.78
MMLU_PRO_LLAMA3_70B_EXPECTED_GUESS = 52.73
# PandaLM test set (Wang et al., ICLR 2024; github.com/WeOpenML/PandaLM): Cohen's κ of each pair of its three
# annotators, published 0.85 / 0.88 / 0.86, reproduced to 3 decimals (../shared/data/pandalm_testset/PROVENANCE.md).
PANDALM_PAIR_KAPPAS = [0.852, 0.862, 0.879]  # sorted

# --- robustness of the top to dropping votes (docs/methods.md §13) -----------------------------------------

# Worked by hand: A beats B in 60 of 100 direct votes (two models, no ties). Dropping x of A's wins leaves
# 60 − x against 40: equal ratings at x = 20 (not a change), B ahead from x = 21.
ROBUSTNESS_SIXTY_FORTY = {"a_wins": 60, "b_wins": 40, "equal_at": 20, "flip_votes": 21}
