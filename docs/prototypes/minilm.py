"""The embedder as the service runs it, for the prototypes: all-MiniLM-L6-v2 int8 from the
provisioned model directory, mean-pooled and L2-normalised, one text per run (a row's vector
then cannot depend on its batch), truncated at 256 tokens."""
import json
import os

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


class Embedder:
    def __init__(self, model_dir, cache_file=None):
        self.tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(256)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        self.session = ort.InferenceSession(os.path.join(model_dir, "model.onnx"), options)
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.cache_file = cache_file
        self.cache = json.load(open(cache_file)) if cache_file and os.path.exists(cache_file) else {}

    def embed(self, texts):
        """One vector per text, as rows of a float32 matrix."""
        for text in texts:
            if text not in self.cache:
                enc = self.tokenizer.encode(text)
                feed = {"input_ids": np.array([enc.ids], dtype=np.int64),
                        "attention_mask": np.array([enc.attention_mask], dtype=np.int64)}
                if "token_type_ids" in self.inputs:
                    feed["token_type_ids"] = np.zeros_like(feed["input_ids"])
                v = self.session.run(None, feed)[0][0].mean(0)
                self.cache[text] = [float(x) for x in v / np.linalg.norm(v)]
        return np.array([self.cache[t] for t in texts], dtype=np.float32)

    def save(self):
        if self.cache_file:
            json.dump(self.cache, open(self.cache_file, "w"))


def unit(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)
