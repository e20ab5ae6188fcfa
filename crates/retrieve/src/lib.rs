//! Retold's search pipeline, written against the domain's ports only: eligible ids,
//! the dense, lexical and entity channels, reciprocal rank fusion, result control
//! (freshness, relevance gate, duplicate collapse, reranker, token budget),
//! explanations and the search_log trace. (Arrives with the retrieval issue.)
