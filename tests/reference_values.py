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
# AlpacaEval 2.0 length-controlled win rates (percent): column length_controlled_winrate of
# src/alpaca_eval/leaderboards/data_AlpacaEval_2/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv at
# github.com/tatsu-lab/alpaca_eval commit 01f3cb2de42f7cc814d838a8946563ab9af1725c, for the models of
# ../shared/data/alpaca_eval_annotations/preferences.csv listed there (51 of the 57; the five FuseChat models and
# NullModel joined the leaderboard later). lc_standard_error is published for vicuna-13b-v1.5-togetherai only.
ALPACA2_PUBLISHED_LC = {
    "Mixtral-8x7B-Instruct-v0.1_concise": 22.962609472758643, "OpenHermes-2.5-Mistral-7B": 16.248577696674843,
    "Qwen-14B-Chat": 12.378741790737235, "alpaca-7b": 5.875487163278986, "alpaca-7b_concise": 4.467251679930348,
    "alpaca-7b_verbose": 6.816306816367379, "alpaca-farm-ppo-human": 6.418603294911531,
    "alpaca-farm-ppo-sim-gpt4-20k": 7.121808101560879, "baize-v2-13b": 7.012247205044542,
    "chatglm2-6b": 4.35928292679035, "claude": 27.289504443727107, "claude-2": 28.155196141629148,
    "claude-2.1": 25.251943886133027, "claude-2.1_concise": 18.2084579084493,
    "claude-instant-1.2": 25.61225902543337, "falcon-40b-instruct": 5.6075325447394455,
    "falcon-7b-instruct": 4.036937566812824, "gemma-2b-it": 5.437453620377121, "gemma-7b-it": 10.425760403690134,
    "gpt-3.5-turbo-0301": 18.09324155198033, "gpt-3.5-turbo-1106": 19.30058903498905,
    "gpt-3.5-turbo-1106_concise": 15.769520983894386, "gpt-3.5-turbo-1106_verbose": 22.00093702171442,
    "gpt35_turbo_instruct": 17.72780108286588, "gpt4_0613_concise": 21.57799091454269, "gpt4_1106_preview": 50.0,
    "gpt4_gamed": 12.188764057640531, "humpback-llama2-70b": 16.249164231428974, "jina-chat": 15.866004049505932,
    "minichat-3b": 5.729332875896306, "minotaur-13b": 11.46525131683203, "nous-hermes-13b": 9.717863417764642,
    "oasst-rlhf-llama-33b": 7.970921837335629, "oasst-sft-llama-33b": 9.866412143759783,
    "oasst-sft-pythia-12b": 3.270102114456748, "openbuddy-falcon-40b-v9": 8.988936477935635,
    "openbuddy-llama-30b-v7.1": 10.214494991204496, "openbuddy-llama2-13b-v11.1": 9.159089775016035,
    "openbuddy-llama2-70b-v10.1": 12.572173272324846, "phi-2": 4.398682270855682, "phi-2-sft": 5.853787690603355,
    "pythia-12b-mix-sft": 4.221361861408184, "text_davinci_001": 9.025728852143091, "ultralm-13b": 7.108191361311167,
    "vicuna-13b": 9.222060023704104, "vicuna-13b-v1.5": 10.484438298504218,
    "vicuna-13b-v1.5-togetherai": 11.685356965300867, "vicuna-7b": 6.277217738516609,
    "vicuna-7b-v1.3": 7.156460956443475, "vicuna-7b-v1.5": 7.616892731870527, "wizardlm-13b": 9.82815076877079
}
ALPACA2_PUBLISHED_LC_SE = {"vicuna-13b-v1.5-togetherai": 0.6243797898207077}
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

# AlpacaEval's published leaderboards, github.com/tatsu-lab/alpaca_eval, columns win_rate, standard_error, n_wins,
# n_wins_base, n_draws, n_total (and discrete_win_rate for 2.0), as get_winrate (src/alpaca_eval/metrics/winrate.py)
# computes them; only the models of ../shared/data/alpaca_eval_annotations. Source files:
# AlpacaEval 2.0: src/alpaca_eval/leaderboards/data_AlpacaEval_2/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv at
# commit 01f3cb2de42f7cc814d838a8946563ab9af1725c: 51 of the 57 models of preferences.csv that the newest leaderboard
# lists (the five FuseChat-* models and NullModel were added to it after that commit).
# (win_rate, standard_error, n_wins, n_wins_base, n_draws, n_total, discrete_win_rate)
ALPACA2_LEADERBOARD = {
    'alpaca-7b': (2.591450540223603, 0.4870855382635108, 17, 785, 3, 805, 2.298136645962733),
    'alpaca-7b_concise': (1.9911763835447769, 0.4437510223659489, 15, 787, 2, 804, 1.9900497512437807),
    'alpaca-7b_verbose': (2.9331016025062344, 0.5302092824422211, 22, 778, 2, 802, 2.8678304239401498),
    'alpaca-farm-ppo-human': (4.100426814981367, 0.6304721406855217, 32, 770, 3, 805, 4.161490683229814),
    'alpaca-farm-ppo-sim-gpt4-20k': (3.450341987080745, 0.5834901037598084, 26, 776, 3, 805, 3.416149068322982),
    'baize-v2-13b': (4.590545330645964, 0.6497033226861672, 32, 770, 3, 805, 4.161490683229814),
    'chatglm2-6b': (2.7621847964596284, 0.5020758950625489, 19, 781, 5, 805, 2.670807453416149),
    'claude': (16.98534361236025, 1.1687959793014906, 129, 676, 0, 805, 16.024844720496894),
    'claude-2': (17.188240356708075, 1.17482825615589, 131, 673, 1, 805, 16.335403726708076),
    'claude-2.1': (15.733506736409938, 1.120315865445773, 115, 688, 2, 805, 14.409937888198757),
    'claude-2.1_concise': (9.22712524063354, 0.8921752289142333, 72, 730, 3, 805, 9.130434782608695),
    'claude-instant-1.2': (16.12739962159006, 1.1341036838301686, 120, 682, 3, 805, 15.093167701863356),
    'falcon-40b-instruct': (3.3429188224720505, 0.5541127159067186, 27, 777, 1, 805, 3.416149068322982),
    'falcon-7b-instruct': (2.146617553167702, 0.454225792894195, 16, 787, 2, 805, 2.111801242236025),
    'gemma-2b-it': (3.4019714381366457, 0.5389981250162534, 23, 782, 0, 805, 2.857142857142857),
    'gemma-7b-it': (6.937294379677018, 0.7869665731853178, 50, 754, 1, 805, 6.273291925465839),
    'gpt-3.5-turbo-0301': (9.622453295105588, 0.9129656686751644, 71, 733, 1, 805, 8.881987577639752),
    'gpt-3.5-turbo-1106': (9.177964561962735, 0.8904117511864436, 64, 737, 4, 805, 8.198757763975156),
    'gpt-3.5-turbo-1106_concise': (7.41586497762733, 0.8374438113826953, 57, 744, 4, 805, 7.329192546583851),
    'gpt-3.5-turbo-1106_verbose': (12.76316981026087, 1.044246819212278, 94, 709, 2, 805, 11.801242236024844),
    'gpt35_turbo_instruct': (8.462446504415423, 0.8724086933609648, 66, 735, 3, 804, 8.395522388059701),
    'gpt4_0613_concise': (9.400320574596272, 0.901021275896262, 71, 729, 5, 805, 9.130434782608695),
    'gpt4_1106_preview': (50.0, 0.0, 0, 0, 805, 805, 50.0),
    'gpt4_gamed': (3.7383373713788814, 0.6278799633668313, 32, 771, 2, 805, 4.099378881987578),
    'humpback-llama2-70b': (10.121771502645965, 0.9401806122130112, 77, 727, 1, 805, 9.627329192546584),
    'jina-chat': (7.786130393366459, 0.8398450575524877, 59, 743, 3, 805, 7.515527950310559),
    'minichat-3b': (3.0071507063602487, 0.504124596172496, 22, 779, 4, 805, 2.981366459627329),
    'minotaur-13b': (5.738963669079602, 0.7271241247374951, 42, 758, 4, 804, 5.472636815920398),
    'Mixtral-8x7B-Instruct-v0.1_concise': (13.744040154795034, 1.071868299237546, 105, 700, 0, 805, 13.043478260869565),
    'nous-hermes-13b': (5.411878933180125, 0.7081240036480951, 43, 761, 1, 805, 5.403726708074534),
    'oasst-rlhf-llama-33b': (6.296434785813666, 0.7417944201185225, 44, 759, 2, 805, 5.590062111801243),
    'oasst-sft-llama-33b': (4.770390991565217, 0.6385940188591437, 36, 764, 5, 805, 4.782608695652174),
    'oasst-sft-pythia-12b': (1.790114083180124, 0.3985580883049341, 13, 790, 2, 805, 1.7391304347826086),
    'openbuddy-falcon-40b-v9': (5.955742846322981, 0.7388621614393269, 45, 758, 2, 805, 5.714285714285714),
    'openbuddy-llama-30b-v7.1': (6.130014613975155, 0.7645283386371114, 47, 755, 3, 805, 6.024844720496894),
    'openbuddy-llama2-13b-v11.1': (6.174716489490684, 0.7535443869648034, 42, 761, 2, 805, 5.341614906832298),
    'openbuddy-llama2-70b-v10.1': (8.096422096285714, 0.8498371493561294, 57, 744, 4, 805, 7.329192546583851),
    'OpenHermes-2.5-Mistral-7B': (10.340415705751552, 0.935655389929366, 75, 727, 3, 805, 9.503105590062113),
    'phi-2': (2.350209543026152, 0.4496590405673333, 15, 785, 3, 803, 2.054794520547945),
    'phi-2-sft': (3.977567775217392, 0.6098271417287373, 28, 777, 0, 805, 3.4782608695652173),
    'pythia-12b-mix-sft': (2.5780902809689445, 0.5127326717340586, 19, 786, 0, 805, 2.360248447204969),
    'Qwen-14B-Chat': (7.502333484720497, 0.8147265702205473, 57, 742, 6, 805, 7.453416149068323),
    'text_davinci_001': (2.764005231108344, 0.5177668863975088, 23, 777, 3, 803, 3.051058530510585),
    'ultralm-13b': (5.074590380484472, 0.6707048924298834, 38, 765, 2, 805, 4.84472049689441),
    'vicuna-13b': (5.831103184496894, 0.7422829864105622, 44, 759, 2, 805, 5.590062111801243),
    'vicuna-13b-v1.5': (6.722122014857143, 0.7674173990955542, 48, 753, 4, 805, 6.211180124223603),
    'vicuna-13b-v1.5-togetherai': (6.958275369254574, 0.7825381738285345, 53, 747, 5, 805, 6.894409937888199),
    'vicuna-7b': (4.16261116226087, 0.6135107768217068, 28, 775, 2, 805, 3.602484472049689),
    'vicuna-7b-v1.3': (4.6425118574534165, 0.6420919828309861, 31, 771, 3, 805, 4.037267080745342),
    'vicuna-7b-v1.5': (4.797493939167703, 0.6655960676971918, 35, 767, 3, 805, 4.53416149068323),
    'wizardlm-13b': (5.878152589354039, 0.7044202269956406, 42, 759, 4, 805, 5.46583850931677),
}
# AlpacaEval 1.0: src/alpaca_eval/leaderboards/data_AlpacaEval/alpaca_eval_gpt4_leaderboard.csv at commit
# 0125b62531eb5997c63140fd8dbd597fc76eb1e6 (gpt4_turbo there is gpt4_1106_preview here, chatgpt is
# gpt-3.5-turbo-0301): 47 of the 53 models of preferences_alpaca_eval1_gpt4_vs_text_davinci_003.csv (the other six
# are not in that version of the file). (win_rate, standard_error, n_wins, n_wins_base, n_draws, n_total)
ALPACA1_LEADERBOARD = {
    'gpt-3.5-turbo-0301': (89.36567164, 1.078948702, 716, 83, 5, 804),  # "chatgpt" there
    'alpaca-7b': (26.45962733, 1.53571147, 205, 584, 16, 805),
    'alpaca-7b-neft': (61.92259675405742, 1.7167744779965055, 496, 305, 0, 801),
    'alpaca-farm-ppo-human': (41.24223602, 1.727181312, 328, 469, 8, 805),
    'causallm-14b': (88.26086956521739, 1.1163330437039891, 705, 89, 11, 805),
    'claude': (88.38509317, 1.11448754, 707, 89, 9, 805),
    'claude-2': (91.35572139, 0.989732378, 734, 69, 1, 804),
    'claude2-alpaca-13b': (78.92768079800499, 1.4409688114828627, 633, 169, 0, 802),
    'cohere': (90.62111801242236, 1.022512757790303, 728, 74, 3, 805),
    'cut-13b': (91.35572139303484, 0.9897323784630048, 734, 69, 1, 804),
    'deita-7b-v1.0': (90.06211180124224, 1.055091421627057, 725, 80, 0, 805),
    'evo-7b': (79.20298879202988, 1.4222487749194896, 632, 163, 8, 803),
    'evo-v2-7b': (89.35242839352429, 1.0802118075166327, 715, 83, 5, 803),
    'falcon-40b-instruct': (45.71428571, 1.752471706, 366, 435, 4, 805),
    'falcon-7b-instruct': (23.60248447, 1.489823537, 187, 612, 6, 805),
    'gpt35_turbo_instruct': (81.71036205, 1.330613333, 642, 134, 25, 801),
    'gpt4': (95.27950311, 0.71628144, 761, 32, 12, 805),
    'gpt4_1106_preview': (97.69900497512438, 0.5104849118311993, 783, 16, 5, 804),
    'guanaco-65b': (71.80124224, 1.586912361, 578, 227, 0, 805),
    'llama-2-13b-chat-hf': (81.09452736, 1.381757309, 652, 152, 0, 804),
    'llama-2-70b-chat-hf': (92.66169154, 0.911762258, 743, 57, 4, 804),
    'llama-2-7b-chat-hf': (71.36645963, 1.593038655, 574, 230, 1, 805),
    'llama-2-chat-7b-evol70k-neft': (82.08955223880598, 1.3531295937660437, 660, 144, 0, 804),
    'LMCocktail-10.7B-v1': (92.21668742216688, 0.9439649347776012, 740, 62, 1, 803),
    'minichat-1.5-3b': (78.55361596009975, 1.4475674207961344, 629, 171, 2, 802),
    'minichat-3b': (48.818407960199, 1.758472313521605, 390, 409, 5, 804),
    'oasst-rlhf-llama-33b': (66.52173913, 1.660828843, 534, 268, 3, 805),
    'pairrm-tulu-2-13b': (91.055900621118, 1.0064549282620592, 733, 72, 0, 805),
    'pairrm-tulu-2-70b': (95.39800995024876, 0.7394089832625841, 767, 37, 0, 804),
    'pairrm-zephyr-7b-beta': (93.40796019900498, 0.8756772802125495, 751, 53, 0, 804),
    'phi-2': (30.663329161451813, 1.6056202651534168, 234, 543, 22, 799),
    'phi-2-dpo': (81.36645962732919, 1.3732271295427965, 655, 150, 0, 805),
    'phi-2-sft': (68.53233830845771, 1.6387859753495355, 551, 253, 0, 804),
    'platolm-7b': (81.94271482, 1.35256737, 656, 143, 4, 803),
    'recycled-wizardlm-7b-v1.0': (78.88198757763976, 1.4394196218329596, 635, 170, 0, 805),
    'recycled-wizardlm-7b-v2.0': (83.47826086956522, 1.3097444061303425, 672, 133, 0, 805),
    'text_davinci_001': (15.17412935, 1.235107892, 112, 672, 20, 804),
    'tulu-2-dpo-13b': (88.12189054726367, 1.1366163670057372, 707, 94, 3, 804),
    'tulu-2-dpo-70b': (95.03105590062113, 0.7613100978662208, 764, 39, 2, 805),
    'tulu-2-dpo-7b': (84.22360248447205, 1.2855613371106336, 678, 127, 0, 805),
    'ultralm-13b-v2.0': (83.60248447, 1.305781745, 673, 132, 0, 805),
    'ultralm-13b-v2.0-best-of-16': (92.29813665, 0.940299807, 743, 62, 0, 805),
    'vicuna-13b': (70.43478261, 1.606968841, 566, 237, 2, 805),
    'wizardlm-13b': (75.31094527, 1.510185829, 601, 194, 9, 804),
    'Yi-34B-Chat': (94.08468244084682, 0.8260116588728516, 754, 46, 3, 803),
    'zephyr-7b-alpha': (85.7587064676617, 1.2285451680042003, 688, 113, 3, 804),
    'zephyr-7b-beta': (90.5977584059776, 1.0287080531312012, 727, 75, 1, 803),
}
# Of those, the models whose annotations in the data snapshot (alpaca_eval commit cd543a1, 2025-08-09) are not the
# ones that leaderboard version was computed from: falcon-7b-instruct's rows there are row for row those of
# falcon-40b-instruct (their rates equal falcon-40b-instruct's published ones); for the six others the snapshot's rows
# give other n_total or win counts than that version lists (annotations that changed upstream since). The data's own
# PROVENANCE.md reproduces all 52 of its models against the leaderboard at cd543a1, which could not be read here.
ALPACA1_REANNOTATED = ("alpaca-7b-neft", "claude", "falcon-7b-instruct", "llama-2-chat-7b-evol70k-neft", "phi-2-dpo",
                       "ultralm-13b-v2.0", "ultralm-13b-v2.0-best-of-16")
# --- robustness of the top to dropping votes (docs/methods.md §13) -----------------------------------------

# Worked by hand: A beats B in 60 of 100 direct votes (two models, no ties). Dropping x of A's wins leaves
# 60 − x against 40: equal ratings at x = 20 (not a change), B ahead from x = 21.
ROBUSTNESS_SIXTY_FORTY = {"a_wins": 60, "b_wins": 40, "equal_at": 20, "flip_votes": 21}
