"""A tiny deterministic LM for lm-evaluation-harness, registered as "pingce_mock".

generate_until: answers from a fixed table keyed by the question in the prompt
(some right, some wrong, some right but with a leading space so that only the
"strip" filter matches). loglikelihood: a fixed preferred choice per question
gets -0.5, every other continuation -(1 + 0.1 * len(continuation)).
"""
import re

from lm_eval.api.model import LM
from lm_eval.api.registry import register_model

GEN = {
    "What is the capital of France?": "Paris",
    "What is 2 + 2?": "4",
    "Which planet is known as the Red Planet?": "Jupiter",        # wrong
    "What is the chemical symbol for gold?": " Au",              # leading space
    "Who wrote Hamlet?": "shakespeare",                          # case differs (ignore_case)
    "What is 12 times 12?": "144.",                              # punctuation (ignore_punctuation)
    "What color is the sky on a clear day?": "Blue",
    "How many legs does a spider have?": "six",                  # wrong
    "What is the largest ocean on Earth?": " Pacific",           # leading space
    "What is the boiling point of water in Celsius?": "100",
    "中国的首都是哪座城市？": "北京",
    "一年有几个月？": "十二",                                      # wrong form
    "水的化学式是什么？": "H2O",
    "《红楼梦》的作者是谁？": "鲁迅",                               # wrong
    "一周有几天？": " 7",                                         # leading space
    "太阳从哪个方向升起？": "东",
    "三角形有几条边？": "3",
    "熊猫主要吃什么？": "竹子",
    "What is the square root of 81?": "nine",                    # wrong form
    "What gas do plants absorb from the air?": "carbon dioxide",
}
MC = {  # preferred continuation (without the leading target delimiter)
    "Which animal is a mammal?": "dolphin",
    "Which number is prime?": "9",                 # wrong
    "Which is a primary color?": "red",
    "Which planet is closest to the Sun?": "Mercury",
    "Which is the largest?": "1000",
    "哪个是水果？": "苹果",
    "哪个城市在中国？": "东京",                       # wrong
    "哪个是偶数？": "八",
    "Which metal is liquid at room temperature?": "mercury",
    "How many continents are there?": "6",         # wrong
}


def _question(context: str) -> str:
    m = re.search(r"Question: (.*?)\nAnswer:\s*$", context, re.S)
    return m.group(1).strip() if m else context.strip()


@register_model("pingce_mock")
class PingceMockLM(LM):
    def __init__(self, **kwargs) -> None:
        super().__init__()

    @classmethod
    def create_from_arg_string(cls, arg_string, additional_config=None):
        return cls()

    def generate_until(self, requests, disable_tqdm: bool = False):
        return [GEN.get(_question(r.args[0]), "I don't know") for r in requests]

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        out = []
        for r in requests:
            context, continuation = r.args
            best = MC.get(_question(context))
            if best is not None and continuation.strip() == best:
                out.append((-0.5, True))
            else:
                out.append((-(1.0 + 0.1 * len(continuation)), False))
        return out

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        return [-float(len(r.args[0])) for r in requests]
