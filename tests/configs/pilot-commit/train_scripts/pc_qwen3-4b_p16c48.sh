#!/usr/bin/env bash
set -euxo pipefail

project_name='pilot-commit'
exp_name='PC-Qwen3-4B-Base-polaris-len4096-diversity0.125-0.25-gen384-p16c48-exclude1'

adv_estimator=grpo

use_kl_in_reward=False
kl_coef=0.0
use_kl_loss=False
kl_loss_coef=0.0

clip_ratio_low=0.2
clip_ratio_high=0.28

max_prompt_length=$((1024 * 2))
max_response_length=$((1024 * 4))
enable_overlong_buffer=False
overlong_buffer_len=$((1024 * 4))
overlong_penalty_factor=1.0

loss_agg_mode="token-mean"

# algorithm
diversity_threshold_upper=0.25
diversity_threshold_lower=0.125
max_num_gen_batches=10
exploration_n=16
buffer_max_off_steps=4
buffer_sampling_method=random
exclude_threshold_upper=1.0

train_prompt_bsz=128
gen_prompt_bsz=$((train_prompt_bsz * 3))
train_prompt_mini_bsz=32
n_resp_per_prompt=48

NGPUS_PER_NODE=8
NNODES=4
ROLLOUT_TP=1
GPU_MEMORY_UTILIZATION=0.6

# Paths
MODEL_PATH=Qwen/Qwen3-4B-Base
CKPTS_DIR=${CKPTS_DIR:-"/root/ckpts/${exp_name}"}
DATA_DIR=${DATA_DIR:-/root/data}
TRAIN_FILE_POLARIS=${DATA_DIR}/polaris_53k/train.parquet
TEST_FILE_DEEPMATH=${DATA_DIR}/deepmath_103k_filtered/test.parquet
TEST_FILE_AIME_2024=${DATA_DIR}/math_test/aime-2024-nosystem-boxed.parquet
TEST_FILE_AIME_2025=${DATA_DIR}/math_test/aime-2025-nosystem-boxed.parquet
TEST_FILE_AMC_2023=${DATA_DIR}/math_test/amc-2023-nosystem-boxed.parquet
TEST_FILE_MATH_500=${DATA_DIR}/math_test/math-500-nosystem-boxed.parquet
TEST_FILE_MINERVA_MATH=${DATA_DIR}/math_test/minerva-math-nosystem-boxed.parquet
TEST_FILE_OYLMPIAD_BENCH=${DATA_DIR}/math_test/oylmpiad-bench-nosystem-boxed.parquet

# Algorithm
temperature=1.0
top_p=1.0
top_k=-1 # 0 for HF rollout, -1 for vLLM rollout
val_top_p=0.7
 
# Mathematically equivalent
use_dynamic_bsz=True
infer_micro_batch_size=null
train_micro_batch_size=null
offload=False

# Verifier
verifier=tinker_sympy

python3 -m recipe.pc.main_pc \
    data.train_files="${TRAIN_FILE_POLARIS}" \
    data.val_files="[${TEST_FILE_AIME_2024}, ${TEST_FILE_AIME_2025}, ${TEST_FILE_AMC_2023}, ${TEST_FILE_MATH_500}, ${TEST_FILE_DEEPMATH}, ${TEST_FILE_MINERVA_MATH}, ${TEST_FILE_OYLMPIAD_BENCH}]" \
    data.prompt_key=prompt \
    data.truncation='left' \
    data.max_prompt_length=${max_prompt_length} \
    data.max_response_length=${max_response_length} \
    data.gen_batch_size=${gen_prompt_bsz} \
    data.train_batch_size=${train_prompt_bsz} \
    actor_rollout_ref.rollout.n=${n_resp_per_prompt} \
    actor_rollout_ref.actor.use_kl_loss=${use_kl_loss} \
    actor_rollout_ref.actor.kl_loss_coef=${kl_loss_coef} \
    actor_rollout_ref.actor.clip_ratio_low=${clip_ratio_low} \
    actor_rollout_ref.actor.clip_ratio_high=${clip_ratio_high} \
    actor_rollout_ref.actor.clip_ratio_c=10.0 \
    algorithm.adv_estimator=${adv_estimator} \
    algorithm.use_kl_in_reward=${use_kl_in_reward} \
    algorithm.kl_ctrl.kl_coef=${kl_coef} \
    algorithm.diversity_threshold_upper=${diversity_threshold_upper} \
    algorithm.diversity_threshold_lower=${diversity_threshold_lower} \
    algorithm.max_num_gen_batches=${max_num_gen_batches} \
    algorithm.buffer_max_off_steps=${buffer_max_off_steps} \
    algorithm.buffer_sampling_method=${buffer_sampling_method} \
    algorithm.exclude_threshold_upper=${exclude_threshold_upper} \
    algorithm.exploration.n=${exploration_n} \
    actor_rollout_ref.model.use_remove_padding=True \
    actor_rollout_ref.actor.use_dynamic_bsz=${use_dynamic_bsz} \
    actor_rollout_ref.ref.log_prob_use_dynamic_bsz=${use_dynamic_bsz} \
    actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=${use_dynamic_bsz} \
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=$((max_prompt_length + max_response_length)) \
    actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=$((max_prompt_length + max_response_length)) \
    actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=$((max_prompt_length + max_response_length)) \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.model.path="${MODEL_PATH}" \
    actor_rollout_ref.model.enable_gradient_checkpointing=True \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.actor.optim.lr_warmup_steps=10 \
    actor_rollout_ref.actor.optim.weight_decay=0.1 \
    actor_rollout_ref.actor.ppo_mini_batch_size=${train_prompt_mini_bsz} \
    actor_rollout_ref.actor.ppo_micro_batch_size=${train_micro_batch_size} \
    actor_rollout_ref.actor.fsdp_config.param_offload=${offload} \
    actor_rollout_ref.actor.fsdp_config.optimizer_offload=${offload} \
    actor_rollout_ref.actor.entropy_coeff=0 \
    actor_rollout_ref.actor.grad_clip=1.0 \
    actor_rollout_ref.actor.loss_agg_mode=${loss_agg_mode} \
    actor_rollout_ref.actor.ulysses_sequence_parallel_size=1 \
    actor_rollout_ref.rollout.gpu_memory_utilization=${GPU_MEMORY_UTILIZATION} \
    actor_rollout_ref.rollout.log_prob_micro_batch_size=${infer_micro_batch_size} \
    actor_rollout_ref.rollout.tensor_model_parallel_size=${ROLLOUT_TP} \
    actor_rollout_ref.rollout.enable_chunked_prefill=True \
    actor_rollout_ref.rollout.max_num_batched_tokens=$((max_prompt_length + max_response_length)) \
    actor_rollout_ref.rollout.max_num_seqs=1024 \
    actor_rollout_ref.rollout.temperature=${temperature} \
    actor_rollout_ref.rollout.top_p=${top_p} \
    actor_rollout_ref.rollout.top_k="${top_k}" \
    actor_rollout_ref.rollout.val_kwargs.temperature=${temperature} \
    actor_rollout_ref.rollout.val_kwargs.top_p=${val_top_p} \
    actor_rollout_ref.rollout.val_kwargs.top_k=${top_k} \
    actor_rollout_ref.rollout.val_kwargs.do_sample=True \
    actor_rollout_ref.rollout.val_kwargs.n=1 \
    actor_rollout_ref.ref.log_prob_micro_batch_size=${infer_micro_batch_size} \
    actor_rollout_ref.ref.fsdp_config.param_offload=${offload} \
    actor_rollout_ref.ref.ulysses_sequence_parallel_size=1 \
    actor_rollout_ref.actor.fsdp_config.fsdp_size=-1 \
    reward_model.reward_manager=dapo \
    reward_model.reward_kwargs.verifier=${verifier} \
    reward_model.overlong_buffer.enable=${enable_overlong_buffer} \
    reward_model.overlong_buffer.len=${overlong_buffer_len} \
    reward_model.overlong_buffer.penalty_factor=${overlong_penalty_factor} \
    trainer.logger=['console','wandb'] \
    trainer.project_name="${project_name}" \
    trainer.experiment_name="${exp_name}" \
    trainer.n_gpus_per_node=${NGPUS_PER_NODE} \
    trainer.nnodes=${NNODES} \
    trainer.val_before_train=True \
    trainer.test_freq=5 \
    trainer.save_freq=20 \
    trainer.total_epochs=100 \
    trainer.total_training_steps=500 \
    trainer.default_local_dir="${CKPTS_DIR}" \
    trainer.resume_mode=disable