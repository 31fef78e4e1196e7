(() => {
  const figures = JSON.parse(document.getElementById("al-figures").textContent);
  const config = { displaylogo: false, responsive: true, toImageButtonOptions: { format: "png", scale: 2 } };
  for (const el of document.querySelectorAll(".chart[data-figure]")) {
    const spec = figures[Number(el.dataset.figure)];
    Plotly.newPlot(el, spec.data, spec.layout, config).then(() => { el.dataset.drawn = "1"; });
  }
})();
