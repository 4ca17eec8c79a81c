def s = DFNF ;
  try(vectorize(2) @ innermost(appliedMap)) ;;
  lowerToC
