import { AuthProvider, useAuth } from "./context/AuthContext";
import Dashboard from "./components/Dashboard";
import { LoginForm } from "./components/LoginForm";

function Shell() {
  const { status } = useAuth();
  if (status === "loading") return <div className="splash">Loading…</div>;
  return status === "authenticated" ? <Dashboard /> : <LoginForm />;
}

export default function App() {
  return (
    <AuthProvider>
      <Shell />
    </AuthProvider>
  );
}
