import { useEffect, useState } from "react";
import { addToCart, formatPrice, Product, searchProducts } from "./api";

function useDebounced<T>(value: T, delayMs = 300): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
  return debounced;
}

export function ProductSearch({ session }: { session: string }) {
  const [query, setQuery] = useState("");
  const [results, setResults] = useState<Product[]>([]);
  const [total, setTotal] = useState(0);
  const debounced = useDebounced(query);

  useEffect(() => {
    let cancelled = false;
    searchProducts(debounced).then((found) => {
      if (!cancelled) setResults(found);
    });
    return () => {
      cancelled = true;
    };
  }, [debounced]);

  const onAdd = async (product: Product) => {
    const cart = await addToCart(session, product.id);
    setTotal(cart.total_cents);
  };

  return (
    <section>
      <input value={query} onChange={(e) => setQuery(e.target.value)} placeholder="Search" />
      <ul>
        {results.map((product) => (
          <li key={product.id}>
            {product.name} <b>{formatPrice(product.price_cents)}</b>
            <button onClick={() => onAdd(product)}>Add</button>
          </li>
        ))}
      </ul>
      <p>Cart total: {formatPrice(total)}</p>
    </section>
  );
}
