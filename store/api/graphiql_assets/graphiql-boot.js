// core-audit's GraphiQL boot: a file, not an inline script, so the page's CSP allows only 'self'.
(function () {
  "use strict";
  // Queries go to the URL this page was loaded from, whatever root path a proxy put before it.
  var url = window.location.origin + window.location.pathname;
  var defaultQuery = [
    "# core-audit: a query-only GraphQL API over an append-only audit store.",
    "# Run it with Ctrl-Enter; the Documentation Explorer (top left) lists every field.",
    "",
    "{",
    "  ledger { treeSize rootHash }",
    "  residuals(first: 3) {",
    "    totalCount",
    "    nodes { residualCode residualKind sourceAxis }",
    "  }",
    "}",
    ""
  ].join("\n");
  var root = ReactDOM.createRoot(document.getElementById("graphiql"));
  root.render(React.createElement(GraphiQL, {
    fetcher: GraphiQL.createFetcher({ url: url }),
    defaultQuery: defaultQuery
  }));
})();
