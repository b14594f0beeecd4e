// The script model the script rules read (src/script/script_model.h) and the notebook reader
// (src/script/script_text.h), on small sources: import forms, canonical names, value kinds,
// scopes, and IPython syntax.
#include "src/script/script_model.h"

#include <gtest/gtest.h>

#include "src/script/script_text.h"

namespace tpudoctor::script {
namespace {

// A parsed source and its model, kept alive together.
struct Parsed {
  explicit Parsed(std::string code) {
    text.code = std::move(code);
    syntax = std::make_unique<Syntax>(Syntax::Parse(text.code).value());
    model = std::make_unique<ScriptModel>(text, *syntax);
  }
  // The call whose callee spells `callee`, or null.
  const Call* CallOf(std::string_view callee) const {
    for (const Call& c : model->calls()) {
      if (c.callee.text() == callee) return &c;
    }
    return nullptr;
  }
  ScriptText text;
  std::unique_ptr<Syntax> syntax;
  std::unique_ptr<ScriptModel> model;
};

TEST(ScriptModelTest, ResolvesEveryImportForm) {
  Parsed p(
      "import tensorflow as tf\n"
      "import numpy as np, torch\n"
      "import torch_xla.core.xla_model as xm\n"
      "from jax import numpy as jnp, jit\n"
      "from tensorflow.keras import layers, Model as M\n"
      "import os.path\n"
      "from . import local\n"
      "tf.data.Dataset.range(3)\n"
      "torch.zeros(1)\n"
      "xm.mark_step()\n"
      "jnp.nonzero(x)\n"
      "jit(f)\n"
      "layers.Dense(3)\n"
      "M()\n"
      "os.path.join('a')\n"
      "local.thing()\n");
  EXPECT_EQ(p.CallOf("tf.data.Dataset.range")->name, "tensorflow.data.Dataset.range");
  EXPECT_EQ(p.CallOf("torch.zeros")->name, "torch.zeros");  // the second name of one import
  EXPECT_EQ(p.CallOf("xm.mark_step")->name, "torch_xla.core.xla_model.mark_step");
  EXPECT_EQ(p.CallOf("jnp.nonzero")->name, "jax.numpy.nonzero");
  EXPECT_EQ(p.CallOf("jit")->name, "jax.jit");
  // tf.keras folds onto keras (data/python/modules.tsv).
  EXPECT_EQ(p.CallOf("layers.Dense")->name, "keras.layers.Dense");
  EXPECT_EQ(p.CallOf("M")->name, "keras.Model");
  EXPECT_EQ(p.CallOf("os.path.join")->name, "os.path.join");
  EXPECT_EQ(p.CallOf("local.thing")->name, "");  // a relative import is the user's own code
  EXPECT_TRUE(p.model->Imports("torch_xla"));
  EXPECT_FALSE(p.model->Imports("torch_xl"));
  EXPECT_EQ(p.model->AliasOf("tensorflow"), "tf");
}

TEST(ScriptModelTest, FollowsDatasetsThroughNamesAndFunctions) {
  Parsed p(
      "import tensorflow as tf\n"
      "def make(files):\n"
      "    ds = tf.data.TFRecordDataset(files)\n"
      "    ds = ds.map(parse)\n"
      "    return ds.shuffle(100)\n"
      "train = make(['a'])\n"
      "batched = train.batch(8)\n"
      "other = thing.batch(8)\n");
  const Call* batch = p.CallOf("train.batch");
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(p.model->KindOf(batch->receiver), Kind::kDataset);
  EXPECT_EQ(p.model->KindOf(p.CallOf("thing.batch")->receiver), Kind::kUnknown);
  std::vector<std::string> chain;
  for (const Call* c : p.model->Chain(batch->node)) chain.push_back(c->method);
  EXPECT_EQ(chain, (std::vector<std::string>{"TFRecordDataset", "map", "shuffle", "batch"}));
}

// A guide's snippet without its imports: a name the guides always import a module as, used as
// that module and bound nowhere, is read as it; bound (or possibly bound by a star import), not.
TEST(ScriptModelTest, ReadsConventionalAliasesOnlyWhereNothingBindsThem) {
  Parsed snippet(
      "ds = tf.data.Dataset.range(8)\n"
      "@tf.function\n"
      "def step(x):\n"
      "    return jnp.sum(x)\n");
  ASSERT_NE(snippet.CallOf("tf.data.Dataset.range"), nullptr);
  EXPECT_EQ(snippet.CallOf("tf.data.Dataset.range")->name, "tensorflow.data.Dataset.range");
  EXPECT_EQ(snippet.CallOf("jnp.sum")->name, "jax.numpy.sum");
  EXPECT_TRUE(snippet.model->functions()[0].tf_function);
  EXPECT_TRUE(snippet.model->Imports("tensorflow"));
  Parsed loader("loader = DataLoader(dataset, batch_size=32)\n");
  EXPECT_EQ(loader.CallOf("DataLoader")->name, "torch.utils.data.DataLoader");

  Parsed bound(
      "tf = make_factory()\n"
      "ds = tf.data.Dataset.range(8)\n");
  EXPECT_EQ(bound.CallOf("tf.data.Dataset.range")->name, "");
  Parsed parameter(
      "def build(tf):\n"
      "    return tf.data.Dataset.range(8)\n");
  EXPECT_EQ(parameter.CallOf("tf.data.Dataset.range")->name, "");
  Parsed star(
      "from helpers import *\n"
      "ds = tf.data.Dataset.range(8)\n");
  EXPECT_EQ(star.CallOf("tf.data.Dataset.range")->name, "");
  EXPECT_FALSE(star.model->Imports("tensorflow"));
}

// A function that returns its own call stops where it recurses; its other returns still count,
// and a call made before the function is defined knows its kind as well.
TEST(ScriptModelTest, KindsFollowRecursionAndLaterDefinitions) {
  Parsed p(
      "import tensorflow as tf\n"
      "early = load(2).batch(8)\n"
      "def load(n):\n"
      "    if n:\n"
      "        return load(n - 1)\n"
      "    return tf.data.Dataset.range(3)\n"
      "def forever():\n"
      "    return forever()\n"
      "late = load(2).batch(8)\n"
      "never = forever().batch(8)\n");
  for (const char* name : {"early", "late"}) {
    const Node value = p.model->ValueOf(name, UINT32_MAX, -1);
    ASSERT_TRUE(value) << name;
    EXPECT_EQ(p.model->KindOf(value), Kind::kDataset) << name;
  }
  EXPECT_EQ(p.model->KindOf(p.model->ValueOf("never", UINT32_MAX, -1)), Kind::kUnknown);
}

TEST(ScriptModelTest, ParametersShadowModuleNames) {
  Parsed p(
      "x = np.load('a.npy')\n"
      "def f(x):\n"
      "    return g(x)\n"
      "h(x)\n");
  const Call* in_f = p.CallOf("g");
  const Call* at_module = p.CallOf("h");
  EXPECT_TRUE(p.model->ValueOf("x", in_f->args[0].begin(), in_f->function).null());
  EXPECT_FALSE(p.model->ValueOf("x", at_module->args[0].begin(), -1).null());
  EXPECT_EQ(p.model->FunctionOf(in_f->node), in_f->function);
  EXPECT_EQ(p.model->FunctionOf(at_module->node), -1);
}

TEST(ScriptModelTest, MarksJittedFunctionsAndTheirStaticArguments) {
  Parsed p(
      "import functools, jax\n"
      "import tensorflow as tf\n"
      "@functools.partial(jax.jit, static_argnames=('training',), static_argnums=(1,))\n"
      "def step(params, n, training):\n"
      "    return params\n"
      "def loss(x):\n"
      "    return x\n"
      "fast = jax.jit(loss)\n"
      "@tf.function\n"
      "def train(x):\n"
      "    return x\n");
  const auto& f = p.model->functions();
  ASSERT_EQ(f.size(), 3u);
  EXPECT_TRUE(f[0].jax_traced);
  EXPECT_EQ(f[0].static_params, (std::vector<std::string>{"training", "n"}));
  EXPECT_TRUE(f[1].jax_traced);  // passed to jax.jit
  EXPECT_TRUE(f[2].tf_function);
  EXPECT_FALSE(f[2].jax_traced);
}

TEST(ScriptModelTest, RecordsLoopsAndWithBlocksAroundCalls) {
  Parsed p(
      "with strategy.scope():\n"
      "    for x in data:\n"
      "        step(x)\n"
      "step(y)\n");
  const Call* inside = &p.model->calls()[1];
  ASSERT_EQ(inside->callee.text(), "step");
  EXPECT_TRUE(inside->loop.is("for_statement"));
  ASSERT_EQ(inside->with_contexts.size(), 1u);
  EXPECT_EQ(inside->with_contexts[0].text(), "strategy.scope()");
  const Call* outside = p.CallOf("step") == inside ? &p.model->calls().back() : nullptr;
  ASSERT_NE(outside, nullptr);
  EXPECT_TRUE(outside->loop.null());
  EXPECT_TRUE(outside->with_contexts.empty());
}

TEST(ScriptModelTest, RefusesCodeNestedBeyondPython) {
  std::string deep;
  for (int i = 0; i < 101; ++i) deep += std::string(i, ' ') + "if x:\n";
  deep += std::string(101, ' ') + "pass\n";
  auto syntax = Syntax::Parse(deep);
  // Either the parser or the model refuses it; nothing crashes.
  if (syntax) {
    ScriptText text;
    text.code = deep;
    Syntax parsed = Syntax::Parse(text.code).value();
    ScriptModel model(text, parsed);
    EXPECT_FALSE(model.nesting_error().empty());
  }
}

Source Notebook(const std::vector<std::string>& cells) {
  std::string json = "{\"cells\": [";
  for (std::size_t i = 0; i < cells.size(); ++i) {
    std::string escaped;
    for (char c : cells[i]) {
      if (c == '\n') {
        escaped += "\\n";
      } else if (c == '"' || c == '\\') {
        escaped += '\\';
        escaped += c;
      } else {
        escaped += c;
      }
    }
    json +=
        std::string(i ? "," : "") + "{\"cell_type\": \"code\", \"source\": \"" + escaped + "\"}";
  }
  return {"nb.ipynb", json + "], \"nbformat\": 4}"};
}

TEST(ScriptTextTest, BlanksIPythonSyntaxOnlyWhereAStatementStarts) {
  auto text = ReadScript(Notebook({
      "!pip install \\\n    tensorflow\n"
      "files = !ls data\n"
      "tf.keras.Input?\n"
      "print('%d items' %\n"
      "      (3))\n"
      "x = (1,\n"
      "     2)\n"
      "PROMPT = \"\"\"Q: How many trees are in the grove?\n"
      "A: 21.\"\"\"\n",
      "%%writefile data.csv\n1,2\n",
      "pip install --quiet google-adk\ncd /content\ncd = 3\nenv.step(cd)\n",
  }));
  ASSERT_TRUE(text) << text.error().message;
  const std::string& code = text->code;
  EXPECT_EQ(code.find("pip"), std::string::npos);
  EXPECT_EQ(code.find("tensorflow\n"), std::string::npos);  // the continuation line too
  EXPECT_EQ(code.find("ls data"), std::string::npos);
  EXPECT_EQ(code.find("Input?"), std::string::npos);
  EXPECT_NE(code.find("(3))"), std::string::npos);  // string formatting inside a call is Python
  EXPECT_NE(code.find("2)"), std::string::npos);
  // A `?` that ends a line inside a string the line opens is the string's, not a help query.
  EXPECT_NE(code.find("grove?"), std::string::npos);
  EXPECT_EQ(code.find("1,2"), std::string::npos);
  EXPECT_EQ(text->written_files, (std::vector<std::string>{"data.csv"}));
  // IPython's automagic: a line magic without its `%`; names that are Python stay.
  EXPECT_EQ(code.find("google-adk"), std::string::npos);
  EXPECT_EQ(code.find("/content"), std::string::npos);
  EXPECT_NE(code.find("cd = 3"), std::string::npos);
  EXPECT_NE(code.find("env.step(cd)"), std::string::npos);
  ASSERT_EQ(text->cells.size(), 3u);
  // Offsets are kept: the second cell starts where its source does in the joined text.
  EXPECT_EQ(text->Locate(text->cells[1].begin).cell, 2);
  EXPECT_EQ(text->Locate(text->cells[1].begin).line, 1);
  EXPECT_TRUE(Syntax::Parse(code).ok());
}

// A notebook whose JSON does not parse (a hand edit left a trailing comma) is refused with where
// it breaks; JSON that is not a notebook is refused as such.
TEST(ScriptTextTest, RefusesBrokenNotebookJsonWithItsPosition) {
  const std::string broken =
      "{\n \"cells\": [\n  {\"cell_type\": \"code\", \"source\": [\"x = 1\\n\",\n  ]}\n ]\n}\n";
  auto text = ReadScript(Source{"broken.ipynb", broken});
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find("invalid JSON at byte"), std::string::npos)
      << text.error().message;
  EXPECT_NE(text.error().message.find("(line 4, column 3)"), std::string::npos)
      << text.error().message;
  auto other = ReadScript(Source{"list.ipynb", "[1, 2]"});
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("not a Jupyter notebook"), std::string::npos);
}

TEST(ScriptTextTest, FindsTopLevelStatementsOutsideStringsBracketsAndDecorators) {
  const std::string code =
      "import os\n"            // a start
      "x = (1,\n"              // not a def, class or import
      "from_ = 2)\n"           // inside brackets
      "doc = '''\n"            //
      "def fake():\n"          // inside a triple-quoted string
      "'''\n"                  //
      "@decorator\n"           // a start (the decorator)
      "\n"                     //
      "def real():\n"          // belongs to the decorator above
      "    import sys\n"       // indented
      "y = 1 + \\\n"           //
      "from os import path\n"  // after a backslash
      "class C:\n"             // a start
      "    pass\n";
  std::vector<std::string_view> lines;
  for (std::uint32_t at : TopLevelStatementStarts(code)) {
    lines.push_back(std::string_view(code).substr(at, code.find('\n', at) - at));
  }
  EXPECT_EQ(lines, (std::vector<std::string_view>{"import os", "@decorator", "class C:"}));
}

// A file of about `bytes`: blocks with imports, decorated defs, classes, strings that spell a def
// at column 0, continuations and calls.
std::string LargeScript(std::size_t bytes) {
  std::string code;
  for (int i = 0; code.size() < bytes; ++i) {
    const std::string n = std::to_string(i);
    code += "import tensorflow as tf" + n + "\n";
    code += "DOC" + n + " = \"\"\"\ndef not_a_def" + n + "():\n\"\"\"\n";
    code += "@tf" + n + ".function(jit_compile=True)\n";
    code += "def step" + n + "(x,\n          y=(1,\n2)):\n";
    code += "    return tf" + n + ".reduce_sum(x) + \\\n        len(y)\n\n";
    code += "class Block" + n + "(tf" + n + ".keras.layers.Layer):\n";
    code += "    def call(self, x):\n        return tf" + n + ".nn.relu(step" + n + "(x))\n";
    code += "ds" + n + " = tf" + n + ".data.Dataset.range(8).map(step" + n + ").batch(4)\n";
  }
  return code;
}

// What the model holds, as plain values, to compare two parses of one file.
std::vector<std::string> Summary(const ScriptModel& model) {
  std::vector<std::string> out;
  for (const Call& c : model.calls()) {
    out.push_back("call " + std::to_string(c.begin) + "-" + std::to_string(c.end) + " " + c.name +
                  " in " + std::to_string(c.function) + " args " + std::to_string(c.args.size()));
  }
  for (const Function& f : model.functions()) {
    std::string line =
        "def " + f.name + " at " + std::to_string(f.begin) + " parent " + std::to_string(f.parent);
    for (const std::string& d : f.decorators) line += " @" + d;
    out.push_back(line + (f.tf_function ? " tf.function" : ""));
  }
  return out;
}

TEST(SyntaxTest, ALargeFileParsedInPartsReadsAsInOnePiece) {
  ScriptText text;
  text.code = LargeScript(400 << 10);
  auto whole = Syntax::Parse(text.code, 1);
  auto parts = Syntax::Parse(text.code, 4);
  ASSERT_TRUE(whole.ok() && parts.ok());
  EXPECT_EQ(whole->roots().size(), 1u);
  EXPECT_EQ(parts->roots().size(), 4u);
  EXPECT_FALSE(parts->has_error());
  const ScriptModel one(text, *whole), four(text, *parts);
  EXPECT_GT(one.calls().size(), 1000u);
  EXPECT_EQ(Summary(one), Summary(four));
  // Offsets are the whole file's in every part.
  const Call& last = four.calls().back();
  EXPECT_EQ(std::string_view(text.code).substr(last.begin, last.end - last.begin),
            last.node.text());
  EXPECT_TRUE(last.node.text().starts_with("tf"));
}

// The model built from each part while the rest is parsed (ScriptModel as the parse's listener)
// is the model built after, for a file in parts and for a broken one read again in one piece.
TEST(SyntaxTest, AModelBuiltWhileParsingIsTheModelBuiltAfter) {
  std::string broken = LargeScript(300 << 10);
  broken.insert(broken.find("\nimport", broken.size() / 3) + 1, "def broken(:\n");
  for (const std::string& code : {LargeScript(400 << 10), broken}) {
    ScriptText text;
    text.code = code;
    ScriptModel during(text);
    auto parsed = Syntax::Parse(text.code, 4, &during);
    ASSERT_TRUE(parsed.ok());
    during.Finish(*parsed);
    const ScriptModel after(text, *parsed);
    EXPECT_GT(after.calls().size(), 1000u);
    EXPECT_EQ(Summary(during), Summary(after));
    EXPECT_EQ(during.calls().size(), after.calls().size());
    EXPECT_EQ(during.for_loops().size(), after.for_loops().size());
  }
}

// A listener is told of every tree once, in order, and of a restart before the file is read
// again in one piece.
TEST(SyntaxTest, AListenerIsToldOfEachTreeInOrder) {
  struct Recorder final : TreeListener {
    void Parsed(Node root) override { told.push_back(root.begin()); }
    void Restart() override {
      told.clear();
      ++restarts;
    }
    std::vector<std::uint32_t> told;
    int restarts = 0;
  };
  const std::string code = LargeScript(400 << 10);
  Recorder recorder;
  auto parsed = Syntax::Parse(code, 4, &recorder);
  ASSERT_TRUE(parsed.ok());
  std::vector<std::uint32_t> roots;
  for (Node root : parsed->roots()) roots.push_back(root.begin());
  EXPECT_EQ(recorder.told, roots);
  EXPECT_EQ(recorder.restarts, 0);

  std::string broken = code;
  broken.insert(broken.find("\nimport", broken.size() / 3) + 1, "def broken(:\n");
  Recorder again;
  auto reread = Syntax::Parse(broken, 4, &again);
  ASSERT_TRUE(reread.ok());
  EXPECT_EQ(again.restarts, 1);
  EXPECT_EQ(again.told, std::vector<std::uint32_t>{0});
}

TEST(SyntaxTest, ABrokenLargeFileIsParsedInOnePiece) {
  std::string code = LargeScript(300 << 10);
  code.insert(code.find("\nimport", code.size() / 3) + 1, "def broken(:\n");
  auto parsed = Syntax::Parse(code, 4);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->roots().size(), 1u);
  EXPECT_TRUE(parsed->has_error());
}

}  // namespace
}  // namespace tpudoctor::script
