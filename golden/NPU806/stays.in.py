import lm_eval

results = lm_eval.simple_evaluate(model="hf", model_args="pretrained=gpt2", device="cpu")
ready = lm_eval.simple_evaluate(model="hf", model_args="pretrained=gpt2", device="npu:0")
picked = lm_eval.simple_evaluate(model="hf", device=args.device)
