def s = DFNF ;
  vectorize(8) @ innermost(appliedMap) ;;
  try(storeInMemory(appliedMap, lowerToC) @ argument @ outermost(appliedMap)) ;;
  try(parallel @ outermost(isMap)) ;;
  lowerToC
