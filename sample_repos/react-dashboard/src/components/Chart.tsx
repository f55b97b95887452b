import { useEffect, useRef } from "react";
import ChartJS, { ChartConfiguration, ChartType } from "chart.js/auto";

export interface Series {
  label: string;
  values: number[];
  color?: string;
}

export interface ChartProps {
  type?: Extract<ChartType, "line" | "bar">;
  labels: string[];
  series: Series[];
  height?: number;
  formatValue?: (v: number) => string;
}

const PALETTE = ["#2563eb", "#16a34a", "#f59e0b", "#dc2626", "#7c3aed"];

export function buildConfig({ type = "line", labels, series, formatValue }: ChartProps): ChartConfiguration {
  return {
    type,
    data: {
      labels,
      datasets: series.map((s, i) => ({
        label: s.label,
        data: s.values,
        borderColor: s.color ?? PALETTE[i % PALETTE.length],
        backgroundColor: (s.color ?? PALETTE[i % PALETTE.length]) + "33",
        tension: 0.3,
        fill: type === "line",
      })),
    },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      interaction: { mode: "index", intersect: false },
      scales: {
        y: { beginAtZero: true, ticks: formatValue ? { callback: (v) => formatValue(Number(v)) } : {} },
      },
    },
  };
}

/**
 * React wrapper around a chart.js canvas: creates the chart once and updates
 * its data in place when the props change, destroying it on unmount.
 */
export function Chart(props: ChartProps) {
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const chartRef = useRef<ChartJS | null>(null);

  useEffect(() => {
    if (!canvasRef.current) return;
    chartRef.current = new ChartJS(canvasRef.current, buildConfig(props));
    return () => {
      chartRef.current?.destroy();
      chartRef.current = null;
    };
    // Recreate only when the chart type changes; data updates happen below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [props.type]);

  useEffect(() => {
    const chart = chartRef.current;
    if (!chart) return;
    const next = buildConfig(props);
    chart.data = next.data;
    chart.update("none");
  }, [props]);

  return (
    <div className="chart" style={{ height: props.height ?? 280 }}>
      <canvas ref={canvasRef} role="img" aria-label={props.series.map((s) => s.label).join(", ")} />
    </div>
  );
}
