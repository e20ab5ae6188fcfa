//! Derive the default embedding model's int8-compute graph from the pinned one.
//!
//! The pinned all-MiniLM-L6-v2 stores each MatMul weight as int8 with a per-column scale, but
//! reads it back as `MatMul(x, Cast(w) × s)`: ONNX Runtime folds that into f32 weights when it
//! loads the model, so every run computes in f32 over ~42 MB of weights. Here each such MatMul
//! becomes ONNX's dynamic quantisation of its input (`DynamicQuantizeLinear`, one scale and
//! zero point per run for the whole tensor), an integer product with the *same* stored int8
//! weights (`MatMulInteger`), and the two scales applied to the int32 result:
//!
//! ```text
//! MatMul(x, Mul(Cast(w_int8), s))  ->  DynamicQuantizeLinear(x) -> (xq, xs, xz)
//!                                      Mul(MatMulInteger(xq, w_int8, xz) as f32, xs · s)
//! ```
//!
//! One quantisation serves every MatMul that reads the same input (a layer's Q, K and V). The
//! weights' now-unused `Cast` and `Mul` nodes are dropped (the graph has no subgraph that could
//! read them; `value_info` keeps their shapes, which nothing reads); nothing else changes.
//! ONNX Runtime fuses the pattern into its int8 kernel. The rewrite is deterministic, so its
//! output is pinned by SHA-256 like the downloaded files (`retold_provision::DERIVED_MODEL`).

use std::collections::{HashMap, HashSet};

use anyhow::{Context, Result, bail};
use onnx_protobuf::{
    AttributeProto, ModelProto, NodeProto, attribute_proto::AttributeType, tensor_proto::DataType,
};
use protobuf::Message;

/// The pinned model's bytes rewritten to compute its weight MatMuls in int8. Fails when the
/// graph holds no MatMul of the expected form (a different model was pinned).
pub(crate) fn rewrite(model: &[u8]) -> Result<Vec<u8>> {
    let mut model = ModelProto::parse_from_bytes(model).context("parsing the ONNX model")?;
    let opset = model.opset_import.iter().find(|o| o.domain.is_empty()).map_or(0, |o| o.version);
    if opset < 11 {
        bail!("the model imports ONNX opset {opset}; DynamicQuantizeLinear needs 11 or later");
    }
    let graph = model.graph.as_mut().context("the ONNX model has no graph")?;
    let int8_weights: HashSet<String> = graph
        .initializer
        .iter()
        .filter(|t| t.data_type == DataType::INT8 as i32 && t.dims.len() == 2)
        .map(|t| t.name.clone())
        .collect();
    // A scale per output column: f32, every dimension but the last of size 1 (`[1, N]`, `[N]`,
    // or one number for all).
    let per_column = |dims: &[i64]| dims.split_last().is_none_or(|(_, outer)| outer.iter().all(|&d| d == 1));
    let float_scales: HashSet<String> = graph
        .initializer
        .iter()
        .filter(|t| t.data_type == DataType::FLOAT as i32 && per_column(&t.dims))
        .map(|t| t.name.clone())
        .collect();
    let producer: HashMap<String, NodeProto> =
        graph.node.iter().flat_map(|n| n.output.iter().map(move |o| (o.clone(), n.clone()))).collect();

    let mut quantised: HashMap<String, [String; 3]> = HashMap::new();
    let mut nodes = Vec::with_capacity(graph.node.len() + 64);
    let mut rewritten = 0usize;
    for node in std::mem::take(&mut graph.node) {
        let Some((weight, scale)) = stored_int8_weight(&node, &producer, &int8_weights, &float_scales) else {
            nodes.push(node);
            continue;
        };
        let input = &node.input[0];
        let [xq, xs, xz] = quantised
            .entry(input.clone())
            .or_insert_with(|| {
                let outputs = ["quantized", "scale", "zero_point"].map(|part| format!("{input}_{part}"));
                let [q, s, z] = &outputs;
                nodes.push(op("DynamicQuantizeLinear", &format!("{input}_quantize"), &[input], &[q, s, z]));
                outputs
            })
            .clone();
        let name = &node.name;
        let (scales, product, float) =
            (format!("{name}_scales"), format!("{name}_int32"), format!("{name}_float"));
        nodes.push(op("Mul", &format!("{name}_scales_mul"), &[&xs, &scale], &[&scales]));
        nodes.push(op("MatMulInteger", &format!("{name}_integer"), &[&xq, &weight, &xz], &[&product]));
        let mut cast = op("Cast", &format!("{name}_cast"), &[&product], &[&float]);
        cast.attribute.push(int_attribute("to", DataType::FLOAT as i64));
        nodes.push(cast);
        nodes.push(op("Mul", &format!("{name}_dequantize"), &[&float, &scales], &[&node.output[0]]));
        rewritten += 1;
    }
    if rewritten == 0 {
        bail!("no MatMul reads a stored int8 weight as Cast(w) × scale: not the pinned model");
    }
    // Each tensor is written once: a name the rewrite made must not be one the graph had.
    let mut written: HashSet<&String> =
        graph.initializer.iter().map(|t| &t.name).chain(graph.input.iter().map(|i| &i.name)).collect();
    if let Some(twice) = nodes.iter().flat_map(|n| &n.output).find(|o| !written.insert(o)) {
        bail!("the rewrite would write the tensor {twice:?} twice (a name clash in the graph)");
    }
    graph.node = without_dead_nodes(nodes, graph.output.iter().map(|o| o.name.clone()).collect());
    model.write_to_bytes().context("encoding the rewritten ONNX model")
}

/// `(w, s)` when `node` is `MatMul(x, Mul(Cast(w), s))` with `w` a stored 2-D int8 tensor and
/// `s` a stored f32 scale per output column (or one for all).
fn stored_int8_weight(
    node: &NodeProto,
    producer: &HashMap<String, NodeProto>,
    int8_weights: &HashSet<String>,
    float_scales: &HashSet<String>,
) -> Option<(String, String)> {
    if node.op_type != "MatMul" || !node.domain.is_empty() || node.input.len() != 2 {
        return None;
    }
    let mul = producer.get(&node.input[1]).filter(|n| n.op_type == "Mul" && n.input.len() == 2)?;
    let cast = producer.get(&mul.input[0]).filter(|n| n.op_type == "Cast" && n.input.len() == 1)?;
    let (weight, scale) = (&cast.input[0], &mul.input[1]);
    (int8_weights.contains(weight) && float_scales.contains(scale)).then(|| (weight.clone(), scale.clone()))
}

/// The nodes whose outputs something still reads (another node or the graph's outputs), in
/// their order: the weights' `Cast` and `Mul` the rewrite left unread go.
fn without_dead_nodes(mut nodes: Vec<NodeProto>, graph_outputs: HashSet<String>) -> Vec<NodeProto> {
    loop {
        let read: HashSet<&String> = nodes.iter().flat_map(|n| &n.input).chain(&graph_outputs).collect();
        let live: Vec<bool> = nodes.iter().map(|n| n.output.iter().any(|o| read.contains(o))).collect();
        if live.iter().all(|&l| l) {
            return nodes;
        }
        let mut live = live.into_iter();
        nodes.retain(|_| live.next().expect("one flag a node"));
    }
}

fn op(op_type: &str, name: &str, inputs: &[&str], outputs: &[&str]) -> NodeProto {
    let mut node = NodeProto::new();
    node.op_type = op_type.to_owned();
    node.name = name.to_owned();
    node.input = inputs.iter().map(|&s| s.to_owned()).collect();
    node.output = outputs.iter().map(|&s| s.to_owned()).collect();
    node
}

fn int_attribute(name: &str, value: i64) -> AttributeProto {
    let mut attribute = AttributeProto::new();
    attribute.name = name.to_owned();
    attribute.type_ = AttributeType::INT.into();
    attribute.i = value;
    attribute
}

#[cfg(test)]
mod tests {
    use onnx_protobuf::{GraphProto, OperatorSetIdProto, TensorProto, ValueInfoProto};

    use super::*;

    fn tensor(name: &str, data_type: DataType, dims: &[i64], raw: Vec<u8>) -> TensorProto {
        let mut t = TensorProto::new();
        t.name = name.to_owned();
        t.data_type = data_type as i32;
        t.dims = dims.to_vec();
        t.raw_data = raw;
        t
    }

    fn s(x: &str) -> String {
        x.to_owned()
    }

    /// x → MatMul(x, Cast(w) × s) twice (two weights reading one input) → Add → y, beside a
    /// MatMul of two activations that must stay as it is.
    fn two_projections() -> Vec<u8> {
        let mut graph = GraphProto::new();
        for w in ["w1", "w2"] {
            graph.initializer.push(tensor(w, DataType::INT8, &[2, 3], vec![1, 2, 3, 4, 5, 6]));
            graph.initializer.push(tensor(&format!("{w}_s"), DataType::FLOAT, &[1, 3], vec![0; 12]));
            let mut cast = op("Cast", &format!("{w}_cast"), &[&s(w)], &[&format!("{w}_f")]);
            cast.attribute.push(int_attribute("to", 1));
            graph.node.push(cast);
            graph.node.push(op(
                "Mul",
                &format!("{w}_mul"),
                &[&format!("{w}_f"), &format!("{w}_s")],
                &[&format!("{w}_d")],
            ));
            graph.node.push(op(
                "MatMul",
                &format!("mm_{w}"),
                &[&s("x"), &format!("{w}_d")],
                &[&format!("y_{w}")],
            ));
        }
        graph.node.push(op("MatMul", "attention", &[&s("y_w1"), &s("y_w2")], &[&s("scores")]));
        graph.node.push(op("Add", "add", &[&s("scores"), &s("y_w1")], &[&s("y")]));
        let mut output = ValueInfoProto::new();
        output.name = s("y");
        graph.output.push(output);
        let mut model = ModelProto::new();
        model.graph = Some(graph).into();
        model.opset_import.push(opset(17));
        model.write_to_bytes().unwrap()
    }

    fn opset(version: i64) -> OperatorSetIdProto {
        let mut opset = OperatorSetIdProto::new();
        opset.version = version;
        opset
    }

    #[test]
    fn each_stored_int8_weight_is_multiplied_in_int8_and_its_input_quantised_once() {
        let rewritten = ModelProto::parse_from_bytes(&rewrite(&two_projections()).unwrap()).unwrap();
        let graph = rewritten.graph.as_ref().unwrap();
        let ops: Vec<&str> = graph.node.iter().map(|n| n.op_type.as_str()).collect();
        assert_eq!(ops.iter().filter(|&&o| o == "DynamicQuantizeLinear").count(), 1, "{ops:?}");
        assert_eq!(ops.iter().filter(|&&o| o == "MatMulInteger").count(), 2, "{ops:?}");
        // The activations' product stays a float MatMul; the weights' Casts and Muls are gone.
        assert_eq!(ops.iter().filter(|&&o| o == "MatMul").count(), 1, "{ops:?}");
        let names: Vec<&str> = graph.node.iter().map(|n| n.name.as_str()).collect();
        for gone in ["w1_cast", "w1_mul", "w2_cast", "w2_mul"] {
            assert!(!names.contains(&gone), "{gone} is still there: {names:?}");
        }
        let integer = graph.node.iter().find(|n| n.name == "mm_w2_integer").unwrap();
        assert_eq!(integer.input, ["x_quantized", "w2", "x_zero_point"]);
        let scales = graph.node.iter().find(|n| n.name == "mm_w2_scales_mul").unwrap();
        assert_eq!(scales.input, ["x_scale", "w2_s"]);
        // The original output names still come out, so the rest of the graph reads them.
        let dequantize = graph.node.iter().find(|n| n.name == "mm_w2_dequantize").unwrap();
        assert_eq!(dequantize.output, ["y_w2"]);
        // Every input is produced before it is read (the graph stays topologically sorted).
        let mut known: HashSet<String> = graph.initializer.iter().map(|t| t.name.clone()).collect();
        known.insert(s("x"));
        for node in &graph.node {
            assert!(node.input.iter().all(|i| known.contains(i)), "{} reads before it is made", node.name);
            known.extend(node.output.iter().cloned());
        }
    }

    #[test]
    fn a_model_without_stored_int8_weights_is_refused() {
        let mut graph = GraphProto::new();
        graph.node.push(op("MatMul", "mm", &[&s("x"), &s("w")], &[&s("y")]));
        graph.initializer.push(tensor("w", DataType::FLOAT, &[2, 2], vec![0; 16]));
        let mut model = ModelProto::new();
        model.graph = Some(graph).into();
        model.opset_import.push(opset(17));
        let err = rewrite(&model.write_to_bytes().unwrap()).unwrap_err();
        assert!(err.to_string().contains("not the pinned model"), "{err}");
    }

    #[test]
    fn a_name_the_rewrite_would_reuse_or_an_old_opset_is_refused() {
        // A tensor already called like the quantised input the rewrite would write.
        let mut model = ModelProto::parse_from_bytes(&two_projections()).unwrap();
        let graph = model.graph.as_mut().unwrap();
        graph.initializer.push(tensor("x_quantized", DataType::FLOAT, &[1], vec![0; 4]));
        let err = rewrite(&model.write_to_bytes().unwrap()).unwrap_err();
        assert!(err.to_string().contains("\"x_quantized\" twice"), "{err}");

        let mut model = ModelProto::parse_from_bytes(&two_projections()).unwrap();
        model.opset_import[0].version = 10;
        let err = rewrite(&model.write_to_bytes().unwrap()).unwrap_err();
        assert!(err.to_string().contains("opset 10"), "{err}");
    }
}
